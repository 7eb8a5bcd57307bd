// Loop (loop.hpp): the engine's entry point on one event loop, its Redis store, and the
// completion of outcomes that wait for Redis.
#include "sluice/engine/loop.hpp"

#include "engine_state.hpp"
#include "internal.hpp"
#include "lease_book.hpp"
#include "limit_factory.hpp"
#include "sluice/backend/redis/store.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine {

namespace {

constexpr metrics::Family kDecisionTime{
    "sluice_decision_duration_seconds", metrics::Kind::kHistogram,
    "Time to decide a request, by where its limits are kept: local (1 in 64 timed) or redis "
    "(every one, from the ask to the conclusion, the Redis round trip included)."};
constexpr metrics::Family kRedisCallTime{
    "sluice_redis_call_duration_seconds", metrics::Kind::kHistogram,
    "Time from handing a decision's query to the loop's Redis store to its answer (batching, "
    "the round trip, or the failure policy at the timeout)."};

}  // namespace

Loop::Loop(Engine& engine, boost::asio::io_context& io, metrics::Registry* registry,
           const core::Clock* clock, const core::Clock* timer)
    : engine_(engine),
      io_(io),
      registry_(registry),
      clock_(clock),
      timer_(registry != nullptr ? timer : nullptr) {
  snapshot();
  if (timer_ == nullptr) return;
  time_metrics_ = registry_->add([this](metrics::Sink& sink) {
    local_times_.collect(sink, kDecisionTime, {"storage", "local"});
    redis_times_.collect(sink, kDecisionTime, {"storage", "redis"});
    call_times_.collect(sink, kRedisCallTime);
  });
}

void Loop::follow_redis_settings() {
  auto options = detail::store_options(snapshot_->rules);
  if (!options) return;  // no store named: one made before stays, idle (no rule can use it)
  if (clock_ != nullptr) options->client.clock = clock_;
  if (store_ != nullptr) {
    store_->reconfigure(*options);
    return;
  }
  store_ = std::make_unique<backend::redis::Store>(io_, *options);
  if (registry_ != nullptr) {
    metrics_ = registry_->add(
        [store = store_.get()](metrics::Sink& sink) { collect_store_metrics(sink, *store); });
  }
}

Loop::~Loop() {
  time_metrics_.reset();
  metrics_.reset();
  store_.reset();
}

const std::shared_ptr<const Snapshot>& Loop::snapshot() {
  const std::uint64_t v = engine_.version();
  if (v != version_ || !snapshot_) {
    snapshot_ = engine_.state().snapshot();
    version_ = v;
    follow_redis_settings();
  }
  return snapshot_;
}

const config::RuleSet& Loop::rules() { return snapshot()->rules; }

std::shared_ptr<const config::RuleSet> Loop::shared_rules() {
  const auto& snap = snapshot();
  return std::shared_ptr<const config::RuleSet>(snap, &snap->rules);
}

Progress Loop::decide(const Ask& ask, core::Nanos now, Outcome& out) {
  // Untimed but for 1 in kTimeEvery: the gateway's hot path pays an increment and a branch.
  if (timer_ == nullptr || ++untimed_ < kTimeEvery) {
    const Progress p = engine_.state().start(snapshot(), ask, now, out);
    return p == Progress::kDone ? p : answer_now(out);
  }
  untimed_ = 0;
  const core::Nanos start = timer_->now();
  const Progress p = engine_.state().start(snapshot(), ask, now, out);
  if (p == Progress::kDone) {
    local_times_.observe(timer_->now() - start);
    return p;
  }
  return answer_now(out);
}

Progress Loop::answer_now(Outcome& out) {
  // No post, callback or suspension: what the store has at hand concludes the outcome as a
  // local decision would. Several queries wait for each other (all or none), so go together.
  detail::Remote& remote = *detail::remote_of(out);
  if (store_ == nullptr || remote.parts.size() != 1) return Progress::kPending;
  const core::Nanos start = timer_ != nullptr ? timer_->now() : 0;
  if (!now_answer_) now_answer_ = std::make_unique<backend::redis::Answer>();
  if (!store_->answer_now(remote.parts.front().query, *now_answer_)) return Progress::kPending;
  engine_.state().finish(out, std::span(now_answer_.get(), 1));
  if (timer_ != nullptr) {  // timed as every decision that asks the store
    const core::Nanos took = timer_->now() - start;
    call_times_.observe(took);
    redis_times_.observe(took);
  }
  return Progress::kDone;
}

void Loop::complete(Outcome& out, Resume done) {
  detail::Remote& remote = *detail::remote_of(out);
  remote.started = timer_ != nullptr ? timer_->now() : 0;
  if (store_ == nullptr) {
    // No store on this loop (no redis url: a rule cannot be kept there): its failure policy.
    // Never inside the initiating call: completions run from the loop, as Asio expects.
    boost::asio::post(io_, [this, &out, done = std::move(done)]() mutable {
      detail::Remote& r = *detail::remote_of(out);
      r.answers = detail::answer_without_store(r);
      conclude(out);
      done();
    });
    return;
  }
  // The parts go out in this loop turn together; the outcome is finished with the last answer.
  // What is gathered is the outcome's (its Remote, reused); `done` stays with the store's
  // callback, held in place (no allocation), so a store dropped with the decision pending
  // drops what waits on it too.
  remote.answers.resize(remote.parts.size());
  remote.left = remote.parts.size();
  if (remote.parts.size() == 1) {
    store_->decide(remote.parts.front().query,
                   [this, &out, done = std::move(done)](backend::redis::Answer a) mutable {
                     if (part_answered(out, 0, std::move(a))) done();
                   });
    return;
  }
  auto shared = std::make_shared<Resume>(std::move(done));
  for (std::size_t p = 0; p < remote.parts.size(); ++p) {
    store_->decide(remote.parts[p].query, [this, &out, p, shared](backend::redis::Answer a) {
      if (part_answered(out, p, std::move(a))) (*shared)();
    });
  }
}

bool Loop::part_answered(Outcome& out, std::size_t part, backend::redis::Answer answer) {
  detail::Remote& remote = *detail::remote_of(out);
  if (timer_ != nullptr) call_times_.observe(timer_->now() - remote.started);
  remote.answers[part] = std::move(answer);
  if (--remote.left > 0) return false;
  conclude(out);
  return true;
}

void Loop::conclude(Outcome& out) {
  detail::Remote& remote = *detail::remote_of(out);
  engine_.state().finish(out, remote.answers);
  hold_leases(out);
  if (timer_ != nullptr) redis_times_.observe(timer_->now() - remote.started);
}

void Loop::hold_leases(Outcome& out) {
  // A check's permit became a token (its caller gives it back or lets it expire); what is left
  // is held by a request running here.
  auto& remote = detail::remote_of(out);
  if (!remote || remote->leases.empty() || store_ == nullptr) return;
  remote->holder = std::make_shared<char>();
  for (const auto& lease : remote->leases) store_->hold(lease, remote->holder);
}

void Loop::release(Outcome& out) {
  auto& remote = detail::remote_of(out);
  if (!remote || store_ == nullptr) return;
  for (const auto& lease : remote->leases) store_->release(lease);
  remote->leases.clear();
  remote->holder.reset();
}

void Loop::release(Outcome& out, UpstreamResult result, core::Nanos now) {
  detail::release_adaptive(out, result, now);
  release(out);
}

void Loop::await_permit(Outcome& out, std::function<void()> done) {
  struct Wait {
    explicit Wait(boost::asio::io_context& io) : timer(io) {}
    boost::asio::steady_timer timer;
  };
  auto wait = std::make_shared<Wait>(io_);
  wait->timer.expires_after(std::chrono::nanoseconds(out.queued));
  wait->timer.async_wait([wait, &out, done = std::move(done)](const boost::system::error_code&) {
    detail::claim_adaptive(out);
    done();
  });
  // The wait ends early when a permit is handed over (on whichever loop released one: the
  // wait ends on this loop) or when the request's client leaves (leave_queue).
  auto cancel = [weak = std::weak_ptr<Wait>(wait)] {
    if (auto w = weak.lock()) w->timer.cancel();
  };
  detail::OutcomeAccess::adaptive(out).cancel_wait = cancel;
  detail::wake_on_grant(out, [io = &io_, cancel] { boost::asio::post(*io, cancel); });
}

void Loop::leave_queue(Outcome& out) {
  detail::AdaptiveHold& hold = detail::OutcomeAccess::adaptive(out);
  if (!hold.cancel_wait) return;
  hold.left = true;
  hold.cancel_wait();
}

bool Loop::release_lease(std::string_view token) {
  detail::RemoteLeaseToken t;
  if (!detail::parse_remote_lease_token(token, t)) return engine_.release_lease(token);
  if (store_ == nullptr) return false;
  const CompiledRule* rule = snapshot()->rule(t.rule);
  if (rule == nullptr || !rule->limit.in_redis()) return false;
  store_->release(backend::redis::RemoteLease{rule->limit.remote, std::move(t.key), t.id});
  return true;
}

}  // namespace sluice::engine
