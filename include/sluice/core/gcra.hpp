// GCRA exactly as redis-cell computes it (CL.THROTTLE key max_burst count period [quantity]):
// one word of state, the theoretical arrival time (TAT), in integer nanoseconds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sluice/core/decision.hpp"
#include "sluice/core/rate.hpp"

namespace sluice::core {

// `burst` is redis-cell's max_burst: limit = burst + 1 requests may pass at one instant.
// The emission interval T is trunc(period_ns / count) computed in float64 as redis-cell does,
// the tolerance (DVT) is T * (burst + 1). A request of cost c is allowed iff
//   max(now, TAT) + T*c - DVT <= now + max_wait
// (max_wait 0 = redis-cell exactly; > 0 = a reservation that waits for the difference).
struct Gcra {
  struct Params {
    Rate rate;
    std::int64_t burst = 0;        // max_burst
    Nanos interval = 0;            // T
    Nanos tolerance = 0;           // DVT = T * (burst + 1)
    Nanos interval_us = 1;         // whole microseconds of T (at least 1), for `remaining`
    double per_interval_us = 1.0;  // 1 / interval_us
  };
  struct State {
    Nanos tat = 0;
  };
  static_assert(sizeof(State) == 8 && std::is_trivially_copyable_v<State>);

  // Fails (returns interval 0) when T*(burst+1) overflows; spec validation reports it.
  static Params make(Rate rate, std::int64_t burst) {
    Params p{rate, burst, 0, 0, 1, 1.0};
    p.interval =
        static_cast<Nanos>(static_cast<double>(rate.period) / static_cast<double>(rate.count));
    if (__builtin_mul_overflow(p.interval, burst + 1, &p.tolerance)) p.tolerance = -1;
    p.interval_us = std::max<Nanos>(p.interval / kNanosPerMicro, 1);
    p.per_interval_us = 1.0 / static_cast<double>(p.interval_us);
    return p;
  }
  static bool valid(const Params& p) { return p.interval > 0 && p.tolerance > 0; }

  static State start(const Params&, Nanos now) { return State{now}; }

  static std::int64_t limit(const Params& p) { return p.burst + 1; }

  // The bare verdict and next TAT, nothing a client is told: what a hot path that only needs
  // yes/no (SharedLimiter::allow) computes. decide() adds the numbers for the client.
  struct Admission {
    enum class Outcome { kAllowed, kWait, kAboveLimit, kOverflow } outcome;
    Nanos tat;      // max(stored TAT, now)
    Nanos new_tat;  // when allowed
    Nanos wait;     // > 0: not yet conforming by this much
  };
  static Admission admit(const Params& p, const State& s, Nanos now, std::int64_t cost,
                         Nanos max_wait) {
    const Nanos tat = std::max(s.tat, now);
    // Above the limit a request can never conform: redis-cell answers retry_after -1.
    if (cost > p.burst + 1) return {Admission::Outcome::kAboveLimit, tat, tat, 0};
    Nanos new_tat = 0;  // interval * cost <= tolerance, which fits; tat + it may not
    if (__builtin_add_overflow(tat, p.interval * cost, &new_tat)) {
      return {Admission::Outcome::kOverflow, tat, tat, 0};
    }
    const Nanos wait = new_tat - p.tolerance - now;
    const bool ok = wait <= 0 || wait <= max_wait;
    return {ok ? Admission::Outcome::kAllowed : Admission::Outcome::kWait, tat, new_tat, wait};
  }

  static Step<State> decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                            Nanos max_wait) {
    const Admission a = admit(p, s, now, cost, max_wait);
    switch (a.outcome) {
      case Admission::Outcome::kAllowed: {
        const Nanos ttl = a.new_tat - now;
        Decision d{true, std::max<Nanos>(a.wait, 0), remaining(p, ttl), 0, ttl, limit(p)};
        return {d, State{a.new_tat}};
      }
      case Admission::Outcome::kOverflow:
        return {overflowed(), s};
      case Admission::Outcome::kAboveLimit:
      case Admission::Outcome::kWait:
        break;
    }
    const Nanos retry = a.outcome == Admission::Outcome::kAboveLimit ? kNever : a.wait;
    return {denied(retry, remaining(p, a.tat - now), a.tat - now, limit(p)), s};
  }

  // redis-cell: remaining = (DVT - ttl) / T, whole microseconds divided as f64 and truncated,
  // when DVT - ttl > -T. For whole numbers below 2^52 that is the integer quotient, computed
  // here by a multiplication and a correction (a division would sit on the CAS's critical
  // path in the shared limiter).
  static std::int64_t remaining(const Params& p, Nanos ttl) {
    const Nanos next = p.tolerance - ttl;
    if (next <= -p.interval) return 0;
    const Nanos x = next / kNanosPerMicro;
    if (x <= 0) return 0;
    auto q = static_cast<std::int64_t>(static_cast<double>(x) * p.per_interval_us);
    if (q * p.interval_us > x) --q;
    if ((q + 1) * p.interval_us <= x) ++q;
    return q;
  }

  // TAT is absolute time, so new parameters apply from the next decision as they are.
  static State retune(const Params&, const Params&, const State& s, Nanos) { return s; }

  static bool idle(const Params&, const State& s, Nanos now) { return s.tat <= now; }
};

}  // namespace sluice::core
