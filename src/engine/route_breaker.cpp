// A route's breaker under its lock, attached at compile time, and its series (route_breaker.hpp).
#include "route_breaker.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "snapshot.hpp"
#include "stale_cache.hpp"

namespace sluice::engine::detail {
namespace {

using B = core::Breaker;
using metrics::Family;
using metrics::Kind;

constexpr Family kState{"sluice_breaker_state", Kind::kGauge,
                        "A route's breaker: 0 closed, 1 open, 2 half-open."};
constexpr Family kTransitions{
    "sluice_breaker_transitions_total", Kind::kCounter,
    "Changes of a route's breaker, by the mode left and the one entered."};
constexpr Family kFallbacks{"sluice_breaker_fallbacks_total", Kind::kCounter,
                            "Requests an open breaker answered, by kind: static or stale."};
constexpr Family kCacheBytes{"sluice_stale_cache_bytes", Kind::kGauge,
                             "Bytes the stale cache holds (responses kept for fallback: stale)."};
constexpr Family kCacheEntries{"sluice_stale_cache_entries", Kind::kGauge,
                               "Responses the stale cache holds."};
constexpr Family kCacheEvictions{"sluice_stale_cache_evictions_total", Kind::kCounter,
                                 "Kept responses dropped to make room (stale_cache.max_bytes)."};

std::size_t index_of(B::Mode m) { return static_cast<std::size_t>(m); }

}  // namespace

RouteBreaker::RouteBreaker(const config::BreakerConfig& config,
                           std::shared_ptr<BreakerCounters> counters)
    : config_(config), counters_(std::move(counters)) {
  for (const auto& [name, value] : config_.fallback.headers) {
    static_headers_ += name + ": " + value + "\r\n";
  }
}

B::Ticket RouteBreaker::admit(core::Nanos now, BreakerChange& change) {
  std::lock_guard lock(mu_);
  const B::Step step = B::admit(config_.params, state_, now);
  change = commit(step.next);
  return step.ticket;
}

BreakerChange RouteBreaker::record(B::Ticket t, B::Result r, core::Nanos duration,
                                   core::Nanos now) {
  std::lock_guard lock(mu_);
  return commit(B::record(config_.params, state_, t, r, duration, now));
}

BreakerChange RouteBreaker::commit(const B::State& next) {
  BreakerChange c;
  c.from = state_.mode;
  c.to = next.mode;
  c.changed = next.epoch != state_.epoch;
  state_ = next;
  if (!c.changed) return c;
  c.reason = next.reason;
  c.figures = next.tripped;
  c.open_for = config_.params.open_for;
  mode_.store(next.mode, std::memory_order_relaxed);
  counters_->transitions[index_of(c.from)][index_of(c.to)].fetch_add(1, std::memory_order_relaxed);
  return c;
}

bool RouteBreaker::failed(const ExchangeEnd& end) const {
  const config::BreakerErrors& e = config_.errors;
  if (end.timed_out) return e.timeout;
  if (end.status == 0 || end.unreachable) return e.unreachable;
  if (end.status / 100 == 5 && e.any_5xx) return true;
  if (end.status / 100 == 4 && e.any_4xx) return true;
  return std::find(e.statuses.begin(), e.statuses.end(), end.status) != e.statuses.end();
}

void attach_breakers(Snapshot& snap, const Snapshot* old) {
  std::unordered_map<std::string_view, const CompiledRoute*> before;
  if (old != nullptr) {
    for (const auto& r : old->routes) {
      if (r->breaker) before.emplace(r->route.name, r.get());
    }
  }
  bool stale = false;
  for (auto& r : snap.routes) {
    if (!r->route.breaker) continue;
    const config::BreakerConfig& config = *r->route.breaker;
    stale = stale || config.fallback.stale;
    const auto it = before.find(r->route.name);
    if (it != before.end() && it->second->breaker->config() == config) {
      r->breaker = it->second->breaker;
      continue;
    }
    r->breaker = std::make_shared<RouteBreaker>(config, it != before.end()
                                                            ? it->second->breaker->shared_counters()
                                                            : std::make_shared<BreakerCounters>());
  }
  if (!stale) return;
  snap.stale = old != nullptr ? old->stale : nullptr;
  if (snap.stale) {
    snap.stale->resize(snap.rules.stale_cache);
  } else {
    snap.stale = std::make_shared<StaleCache>(snap.rules.stale_cache);
  }
}

void breaker_metrics(metrics::Sink& sink, const Snapshot& snap) {
  for (const Family& f :
       {kState, kTransitions, kFallbacks, kCacheBytes, kCacheEntries, kCacheEvictions}) {
    sink.declare(f);
  }
  for (const auto& r : snap.routes) {
    if (!r->breaker) continue;
    const std::string_view route = r->route.name;
    RouteBreaker& b = *r->breaker;
    sink.add(kState, {{"route", route}}, static_cast<double>(index_of(b.mode())));
    for (std::size_t from = 0; from < BreakerCounters::kModes; ++from) {
      for (std::size_t to = 0; to < BreakerCounters::kModes; ++to) {
        const std::uint64_t n = b.counters().transitions[from][to].load(std::memory_order_relaxed);
        if (n == 0) continue;  // a series appears with its first change
        sink.add(kTransitions,
                 {{"route", route},
                  {"from", B::mode_name(static_cast<B::Mode>(from))},
                  {"to", B::mode_name(static_cast<B::Mode>(to))}},
                 static_cast<double>(n));
      }
    }
    for (auto [kind, n] : {std::pair{"static", &b.counters().static_answers},
                           std::pair{"stale", &b.counters().stale_answers}}) {
      const std::uint64_t v = n->load(std::memory_order_relaxed);
      if (v > 0) sink.add(kFallbacks, {{"route", route}, {"kind", kind}}, static_cast<double>(v));
    }
  }
  if (!snap.stale) return;
  sink.add(kCacheBytes, {}, static_cast<double>(snap.stale->bytes()));
  sink.add(kCacheEntries, {}, static_cast<double>(snap.stale->entries()));
  sink.add(kCacheEvictions, {}, static_cast<double>(snap.stale->evictions()));
}

}  // namespace sluice::engine::detail
