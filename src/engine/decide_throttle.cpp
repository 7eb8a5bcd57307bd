// CL.THROTTLE through the engine (engine_state.hpp): redis-cell's GCRA with the parameters of
// each call over one TAT per key, in this process (a DynamicLimit of the local layer) or, with
// `resp: {storage: redis}`, in Redis so that every instance answers for the same key as one
// redis-cell would.
#include "engine_state.hpp"
#include "internal.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine::detail {
namespace {

// The GCRA parameters of a call as redis-cell computes them: T = trunc(period_ns / count) in
// float64. Refused: a zero rate (redis-cell's own error, also when T rounds to 0), negative
// values (redis-cell computes with them, which would only make nonsense: a limit of 0, a TAT
// moving backwards), T * (max_burst + 1) overflowing. Errors are whole replies, in
// redis-cell's words where it has them.
core::Expected<core::Gcra::Params> throttle_params(const ThrottleAsk& a) {
  constexpr const char* kZeroRate = "Cell error: Zero rates are not supported";
  if (a.count == 0 || a.period == 0) return core::make_error(kZeroRate);
  const std::pair<const char*, std::int64_t> checks[] = {{"max_burst", a.max_burst},
                                                         {"count", a.count},
                                                         {"period", a.period},
                                                         {"quantity", a.quantity}};
  for (const auto& [name, value] : checks) {
    if (value >= 0) continue;
    const bool zero_ok =
        std::string_view(name) == "max_burst" || std::string_view(name) == "quantity";
    return core::make_error("ERR invalid " + std::string(name) + " " + std::to_string(value) +
                            (zero_ok ? ": must be 0 or more" : ": must be positive"));
  }
  core::Nanos period_ns = 0;
  if (__builtin_mul_overflow(a.period, core::kNanosPerSecond, &period_ns)) {
    return core::make_error("ERR invalid period " + std::to_string(a.period) +
                            ": too large (at most 9223372036 seconds)");
  }
  const core::Gcra::Params p = core::Gcra::make(core::Rate{a.count, period_ns}, a.max_burst);
  if (p.interval <= 0) return core::make_error(kZeroRate);
  if (!core::Gcra::valid(p)) {
    return core::make_error("ERR max_burst " + std::to_string(a.max_burst) +
                            " too large for this rate: the burst would last over 292 years");
  }
  return p;
}

}  // namespace

void conclude_throttle(Outcome& out, RuleCounters& counters) {
  if (out.total.overflow) {
    refuse(out, ErrorKind::kBadQuantity, "ERR invalid quantity: too large for this rate");
    return;
  }
  out.verdict = out.total.allowed ? Verdict::kAllow : Verdict::kDeny;
  count_decision(counters, out.total.allowed, true, 0);
}

Progress EngineState::start_throttle(const Snapshot& snap, const ThrottleAsk& a, core::Nanos now,
                                     Outcome& out) {
  auto params = throttle_params(a);
  if (!params) {
    refuse(out, ErrorKind::kBadArguments, params.error());
    return Progress::kDone;
  }
  const bool in_redis =
      snap.rules.resp && snap.rules.resp->storage == config::Storage::kRedis && snap.rules.redis;
  if (in_redis) {
    const CompiledLimit* limit = throttle_limit(snap, a, *params, out);
    if (limit == nullptr) return Progress::kDone;
    return start_one(*limit, nullptr, nullptr, a.key, a.quantity, 0, now, AskKind::kThrottle, out);
  }
  const auto decision = throttle_.decide(table::hash_key(a.key), *params, now, a.quantity, 0);
  if (!decision) {
    refuse(out, ErrorKind::kBusy, "ERR throttle table busy, try again");
    return Progress::kDone;
  }
  out.total = *decision;
  if (decision->overflow) {
    refuse(out, ErrorKind::kBadQuantity,
           "ERR invalid quantity " + std::to_string(a.quantity) + ": too large for this rate");
    return Progress::kDone;
  }
  conclude_throttle(out, throttle_counters_);
  return Progress::kDone;
}

// One Redis form per distinct (max_burst, count, period): all named "cl.throttle", so a key's
// state in Redis is one TAT whatever the parameters, as redis-cell keeps it.
const CompiledLimit* EngineState::throttle_limit(const Snapshot& snap, const ThrottleAsk& a,
                                                 const core::Gcra::Params& params, Outcome& out) {
  spec::LimitSpec spec;
  spec.algorithm = "gcra";
  spec.params = params;
  spec.canonical = "gcra:rate=" + std::to_string(a.count) + "/" + std::to_string(a.period) +
                   "s,burst=" + std::to_string(a.max_burst);
  const Placement where{0, remote_options(snap.rules.resp_redis_options()), "cl.throttle"};
  const auto got = throttle_remote_.get(
      spec.canonical, [&] { return make_limit("cl.throttle", spec, where, nullptr, 0); });
  if (got.limit == nullptr) {
    refuse(out, ErrorKind::kBadArguments,
           got.miss == LazyLimits::Miss::kFull
               ? "ERR more than " + std::to_string(Engine::kMaxInlineLimits) +
                     " distinct CL.THROTTLE parameter sets kept in Redis; use fewer"
               : "ERR " + got.error);
  }
  return got.limit;
}

}  // namespace sluice::engine::detail
