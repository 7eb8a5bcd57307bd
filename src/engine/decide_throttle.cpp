// CL.THROTTLE through the engine (engine.hpp): redis-cell's GCRA with the parameters of each
// call over one TAT per key, in this process or, with `resp: {storage: redis}`, in Redis so
// that every instance answers for the same key as one redis-cell would.
#include "internal.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine {
namespace {

// The GCRA parameters of a call as redis-cell computes them: T = trunc(period_ns / count) in
// float64; refused when T rounds to 0 or T * (max_burst + 1) overflows. Errors are whole
// replies, in redis-cell's words where it has them.
core::Expected<core::Gcra::Params> throttle_params(const ThrottleAsk& a) {
  if (a.count == 0 || a.period == 0) {
    return core::make_error("Cell error: Zero rates are not supported");
  }
  core::Nanos period_ns = 0;
  if (__builtin_mul_overflow(a.period, core::kNanosPerSecond, &period_ns)) {
    return core::make_error("ERR invalid period " + std::to_string(a.period) +
                            ": too large (at most 9223372036 seconds)");
  }
  const core::Gcra::Params p = core::Gcra::make(core::Rate{a.count, period_ns}, a.max_burst);
  if (p.interval <= 0) return core::make_error("Cell error: Zero rates are not supported");
  if (!core::Gcra::valid(p)) {
    return core::make_error("ERR max_burst " + std::to_string(a.max_burst) +
                            " too large for this rate: the burst would last over 292 years");
  }
  return p;
}

void refuse(Outcome& out, std::string error, std::string_view field) {
  out.verdict = Verdict::kInvalid;
  out.error = std::move(error);
  out.error_field = field;
}

}  // namespace

Progress Engine::start_throttle(const Snapshot& snap, const ThrottleAsk& a, core::Nanos now,
                                Outcome& out) {
  auto params = throttle_params(a);
  if (!params) {
    refuse(out, params.error(), "arguments");
    return Progress::kDone;
  }
  const bool in_redis =
      snap.rules.resp && snap.rules.resp->storage == config::Storage::kRedis && snap.rules.redis;
  if (in_redis) {
    const CompiledLimit* limit = throttle_limit(snap, a, *params, out);
    if (limit == nullptr) return Progress::kDone;
    return detail::start_one(*limit, nullptr, nullptr, a.key, a.quantity, 0, now,
                             detail::AskKind::kThrottle, out);
  }
  auto locked = throttle_->lock(table::hash_key(a.key), now);
  if (!locked) {
    refuse(out, "ERR throttle table busy, try again", "key");
    return Progress::kDone;
  }
  const auto step = core::Gcra::decide(*params, locked->state(), locked->now(), a.quantity, 0);
  if (step.decision.overflow) {
    refuse(out, "ERR invalid quantity " + std::to_string(a.quantity) + ": too large for this rate",
           "quantity");
    return Progress::kDone;
  }
  if (step.decision.allowed) locked->state() = step.next;
  out.total = step.decision;
  out.verdict = step.decision.allowed ? Verdict::kAllow : Verdict::kDeny;
  return Progress::kDone;
}

// One Redis form per distinct (max_burst, count, period): all named "cl.throttle", so a key's
// state in Redis is one TAT whatever the parameters, as redis-cell keeps it.
const CompiledLimit* Engine::throttle_limit(const Snapshot& snap, const ThrottleAsk& a,
                                            const core::Gcra::Params& params, Outcome& out) {
  spec::LimitSpec spec;
  spec.algorithm = "gcra";
  spec.params = params;
  spec.canonical = "gcra:rate=" + std::to_string(a.count) + "/" + std::to_string(a.period) +
                   "s,burst=" + std::to_string(a.max_burst);
  std::lock_guard lock(throttle_mutex_);
  if (auto it = throttle_remote_.find(spec.canonical); it != throttle_remote_.end()) {
    return it->second.get();
  }
  if (throttle_remote_.size() >= kMaxInlineLimits) {
    refuse(out,
           "ERR more than " + std::to_string(kMaxInlineLimits) +
               " distinct CL.THROTTLE parameter sets kept in Redis; use fewer",
           "arguments");
    return nullptr;
  }
  const config::RespSettings& resp = *snap.rules.resp;
  backend::redis::RemoteLimitOptions options;
  options.on_failure =
      detail::backend_policy(resp.on_failure.value_or(snap.rules.redis->defaults.on_failure));
  options.local_share = resp.local_share.value_or(snap.rules.redis->defaults.local_share);
  auto remote = backend::redis::RemoteLimit::make("cl.throttle", spec, options);
  if (!remote) {
    refuse(out, "ERR " + remote.error(), "arguments");
    return nullptr;
  }
  auto limit = std::make_unique<CompiledLimit>();
  limit->name = "cl.throttle";
  limit->spec = spec;
  limit->quota = quota_of(spec);
  limit->remote = *remote;
  return throttle_remote_.emplace(spec.canonical, std::move(limit)).first->second.get();
}

}  // namespace sluice::engine
