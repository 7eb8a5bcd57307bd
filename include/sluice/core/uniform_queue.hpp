// Sentinel 1.8.9's ThrottlingController (the RATE_LIMITER control behaviour): requests pass
// evenly spaced one cost apart, queueing up to max-wait; no credit builds up while idle.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sluice/core/decision.hpp"
#include "sluice/core/rate.hpp"
#include "sluice/core/reference_math.hpp"

namespace sluice::core {

// Sentinel spaces requests by cost = round(statDurationMs * acquire / count) on a millisecond
// clock, or on a nanosecond clock when statDurationMs % round(count) != 0 or count > 1000 per
// second, as it chooses. A request passes at once when the last pass is a cost ago; otherwise
// it waits for last + cost if that is within maxQueueingTime, else it is rejected.
// Sentinel starts latestPassedTime at -1 on a clock that is epoch milliseconds (or an arbitrary
// nanoTime origin), so its users see a key's first request pass at once. A trace's virtual
// time starts near 0, where a literal -1 would make that first request wait a spacing: a key
// that has never passed starts at kNeverPassed instead and passes its first request at once,
// whatever the time and the cost.
// Where Sentinel would divide by zero (round(count) == 0, a rate below 0.5/s) we use the
// nanosecond clock, which its own comment says is the accurate one.
struct UniformQueue {
  static constexpr std::int64_t kStatDurationMs = 1000;

  struct Params {
    Rate rate;
    Nanos max_wait = 500 * kNanosPerMilli;
    double count = 0;  // permits per statDurationMs (QPS)
    std::int64_t max_queueing_ms = 500;
    bool use_nanos = false;
  };
  static constexpr std::int64_t kNeverPassed = INT64_MIN;

  struct State {
    std::int64_t latest_passed = kNeverPassed;  // ms or ns, as Params::use_nanos says
  };
  static_assert(sizeof(State) == 8 && std::is_trivially_copyable_v<State>);

  static Params make(Rate rate, Nanos max_wait) {
    Params p{rate, max_wait, rate.per_second(), max_wait / kNanosPerMilli, false};
    const std::int64_t rounded = refmath::java_round(p.count);
    p.use_nanos = rounded == 0 || kStatDurationMs % rounded != 0 ||
                  p.count / static_cast<double>(kStatDurationMs) > 1;
    return p;
  }

  static State start(const Params&, Nanos) { return State{kNeverPassed}; }

  // Spacing for `acquire` permits, in the clock's unit, computed as Sentinel does.
  static std::int64_t cost_time(const Params& p, std::int64_t acquire) {
    const double a = static_cast<double>(acquire);
    if (p.use_nanos) {
      return refmath::java_round(1.0 * 1e6 * static_cast<double>(kStatDurationMs) * a / p.count);
    }
    return refmath::java_round(1.0 * static_cast<double>(kStatDurationMs) * a / p.count);
  }

  static Step<State> decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                            Nanos /*max_wait: its own max-wait parameter applies*/) {
    const Nanos unit = p.use_nanos ? 1 : kNanosPerMilli;
    const std::int64_t current = now / unit;
    if (s.latest_passed == kNeverPassed) return {Decision{true, 0, 0, 0, 0, -1}, State{current}};
    const std::int64_t max_queue =
        p.use_nanos ? p.max_queueing_ms * kNanosPerMilli : p.max_queueing_ms;
    const std::int64_t spacing = cost_time(p, cost);
    std::int64_t expected = 0;
    if (__builtin_add_overflow(spacing, s.latest_passed, &expected)) return {overflowed(), s};
    if (expected <= current) {
      return {Decision{true, 0, 0, 0, 0, -1}, State{current}};
    }
    const std::int64_t wait = expected - current;
    if (wait > max_queue) {
      return {
          denied(saturating_mul(wait - max_queue, unit), 0,
                 saturating_mul(std::max<std::int64_t>(s.latest_passed - current, 0), unit), -1),
          s};
    }
    Nanos delay = 0;
    if (__builtin_mul_overflow(wait, unit, &delay)) return {overflowed(), s};
    return {Decision{true, delay, 0, 0, delay, -1}, State{expected}};
  }

  static State retune(const Params& from, const Params& to, const State& s, Nanos) {
    if (from.use_nanos == to.use_nanos) return s;
    // The clock unit changes with the rate: carry the last pass over to the new unit.
    if (s.latest_passed == kNeverPassed) return s;
    return State{to.use_nanos ? s.latest_passed * kNanosPerMilli
                              : s.latest_passed / kNanosPerMilli};
  }

  static bool idle(const Params& p, const State& s, Nanos now) {
    const Nanos unit = p.use_nanos ? 1 : kNanosPerMilli;
    // A new key passes any request at once; an old one, any whose spacing has elapsed since
    // its last pass. Once that pass is 1024 spacings ago, both agree for costs up to 1024.
    return s.latest_passed == kNeverPassed || now / unit - s.latest_passed > cost_time(p, 1) * 1024;
  }
};

}  // namespace sluice::core
