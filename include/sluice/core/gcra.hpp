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
    std::int64_t burst = 0;  // max_burst
    Nanos interval = 0;      // T
    Nanos tolerance = 0;     // DVT = T * (burst + 1)
  };
  struct State {
    Nanos tat = 0;
  };
  static_assert(sizeof(State) == 8 && std::is_trivially_copyable_v<State>);

  // Fails (returns interval 0) when T*(burst+1) overflows; spec validation reports it.
  static Params make(Rate rate, std::int64_t burst) {
    Params p{rate, burst, 0, 0};
    p.interval = static_cast<Nanos>(static_cast<double>(rate.period) /
                                    static_cast<double>(rate.count));
    if (__builtin_mul_overflow(p.interval, burst + 1, &p.tolerance)) p.tolerance = -1;
    return p;
  }
  static bool valid(const Params& p) { return p.interval > 0 && p.tolerance > 0; }

  static State start(const Params&, Nanos now) { return State{now}; }

  static std::int64_t limit(const Params& p) { return p.burst + 1; }

  static Step<State> decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                            Nanos max_wait) {
    const Nanos tat = std::max(s.tat, now);
    if (cost > p.burst + 1) {
      // Can never conform: redis-cell answers limited with retry_after -1.
      return {denied(kNever, remaining(p, tat - now), tat - now, limit(p)), s};
    }
    Nanos new_tat = 0;  // interval * cost <= tolerance, which fits; tat + it may not
    if (__builtin_add_overflow(tat, p.interval * cost, &new_tat)) return {overflowed(), s};
    const Nanos wait = new_tat - p.tolerance - now;  // > 0: not yet conforming
    if (wait <= 0 || wait <= max_wait) {
      const Nanos ttl = new_tat - now;
      Decision d{true, std::max<Nanos>(wait, 0), remaining(p, ttl), 0, ttl, limit(p)};
      return {d, State{new_tat}};
    }
    return {denied(wait, remaining(p, tat - now), tat - now, limit(p)), s};
  }

  // redis-cell: remaining = (DVT - ttl) / T, in microseconds as float, when DVT - ttl > -T.
  static std::int64_t remaining(const Params& p, Nanos ttl) {
    const Nanos next = p.tolerance - ttl;
    if (next <= -p.interval) return 0;
    const Nanos t_us = std::max<Nanos>(p.interval / kNanosPerMicro, 1);
    return std::max<std::int64_t>(
        0, static_cast<std::int64_t>(static_cast<double>(next / kNanosPerMicro) /
                                     static_cast<double>(t_us)));
  }

  // TAT is absolute time, so new parameters apply from the next decision as they are.
  static State retune(const Params&, const Params&, const State& s, Nanos) { return s; }

  static bool idle(const Params&, const State& s, Nanos now) { return s.tat <= now; }
};

}  // namespace sluice::core
