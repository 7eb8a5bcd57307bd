// BreakerCall (breaker_call.hpp): one gateway request's part in its route's breaker, and the
// stale cache's key: route, method, host, path, query and the keys of the rules that decided it.
#include "sluice/engine/breaker_call.hpp"

#include "internal.hpp"
#include "keys.hpp"
#include "route_breaker.hpp"
#include "snapshot.hpp"
#include "stale_cache.hpp"

namespace sluice::engine {
namespace {

using B = core::Breaker;

// The request's key in the stale cache. A rule's key joins it, so that a response keyed per
// client or per API key is answered to that client or key only.
table::KeyHash stale_key(const Outcome& out, const RequestView& view, std::string_view route) {
  table::KeyHasher h;
  for (std::string_view piece :
       {route, std::string_view("\n"), view.method, std::string_view("\n"), view.host,
        std::string_view("\n"), view.path, std::string_view("?"), view.query}) {
    h.add(piece);
  }
  std::string key;
  for (const Applied& a : out.applied) {
    if (a.rule == nullptr || !a.enforced) continue;
    if (!detail::request_key_text(a.rule->key, view, out.client(), route, key)) continue;
    h.add("\n");
    h.add(a.rule->name);
    h.add("=");
    h.add(key);
  }
  return h.finish();
}

}  // namespace

BreakerCall::BreakerCall(BreakerCall&& other) noexcept { *this = std::move(other); }

BreakerCall& BreakerCall::operator=(BreakerCall&& other) noexcept {
  if (this == &other) return *this;
  if (!finished_ && breaker_) breaker_->record(ticket_, B::Result::kIgnored, 0, 0);
  breaker_ = std::move(other.breaker_);
  cache_ = std::move(other.cache_);
  ticket_ = other.ticket_;
  key_[0] = other.key_[0];
  key_[1] = other.key_[1];
  keeps_ = other.keeps_;
  reads_ = other.reads_;
  finished_ = other.finished_;
  change_ = other.change_;
  other.finished_ = true;
  return *this;
}

BreakerCall::~BreakerCall() {
  if (!finished_ && breaker_) breaker_->record(ticket_, B::Result::kIgnored, 0, 0);
}

BreakerCall BreakerCall::ask(Outcome& out, const RequestView& view, core::Nanos now) {
  BreakerCall call;
  const CompiledRoute* route = detail::OutcomeAccess::route(out);
  if (route == nullptr || !route->breaker) return call;
  call.breaker_ = route->breaker;
  call.ticket_ = call.breaker_->admit(now, call.change_);
  call.finished_ = call.ticket_.admit == B::Admit::kRefuse;
  if (!call.breaker_->config().fallback.stale) return call;
  call.cache_ = detail::snapshot_of(out).stale;
  call.keeps_ = view.method == "GET";
  call.reads_ = call.keeps_ || view.method == "HEAD";
  if (call.cache_ && call.reads_) {
    // A HEAD is answered from its GET's response: one key for both.
    RequestView as_get = view;
    as_get.method = "GET";
    const table::KeyHash k = stale_key(out, as_get, route->route.name);
    call.key_[0] = k.bucket;
    call.key_[1] = k.fingerprint;
  }
  return call;
}

bool BreakerCall::refused() const {
  return breaker_ != nullptr && ticket_.admit == B::Admit::kRefuse;
}

FallbackAnswer BreakerCall::fallback(core::Nanos now) {
  FallbackAnswer a;
  const config::BreakerFallback& f = breaker_->config().fallback;
  if (cache_ && reads_) {
    if (auto e = cache_->get({key_[0], key_[1]}, now, f.stale_for)) {
      a.stale = true;
      a.status = e->status;
      a.headers = e->headers;
      a.body = e->body;
      a.age = now - e->stored;
      a.hold = std::move(e);
      breaker_->counters().stale_answers.fetch_add(1, std::memory_order_relaxed);
      return a;
    }
  }
  a.status = f.status;
  a.headers = breaker_->static_headers();
  a.body = f.body;
  breaker_->counters().static_answers.fetch_add(1, std::memory_order_relaxed);
  return a;
}

std::size_t BreakerCall::keep_limit() const {
  if (!keeps_ || !cache_ || refused()) return 0;
  const std::size_t max = cache_->max_entry();
  return max > detail::StaleCache::kEntryOverhead ? max - detail::StaleCache::kEntryOverhead : 0;
}

void BreakerCall::keep(int status, std::string headers, std::string body, core::Nanos now) {
  if (keep_limit() == 0 || status / 100 != 2) return;
  auto e = std::make_shared<detail::StaleEntry>();
  e->status = status;
  e->headers = std::move(headers);
  e->body = std::move(body);
  e->stored = now;
  cache_->put({key_[0], key_[1]}, std::move(e));
}

BreakerChange BreakerCall::finish(const ExchangeEnd& end, core::Nanos now) {
  if (finished_ || !breaker_) return {};
  finished_ = true;
  const B::Result r = end.ignored             ? B::Result::kIgnored
                      : breaker_->failed(end) ? B::Result::kFailure
                                              : B::Result::kSuccess;
  return breaker_->record(ticket_, r, end.duration, now);
}

}  // namespace sluice::engine
