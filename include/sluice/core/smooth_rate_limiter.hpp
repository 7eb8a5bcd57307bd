// The reservation logic Guava 31.1's SmoothRateLimiter shares between SmoothBursty and
// SmoothWarmingUp: stored permits, the next free ticket, and "pay later" for big requests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sluice/core/decision.hpp"
#include "sluice/core/reference_math.hpp"

namespace sluice::core {

// Guava keeps time in whole microseconds and permits as doubles; so does this state (16 bytes).
struct SmoothState {
  double stored_permits = 0;
  std::int64_t next_free_micros = 0;
};
static_assert(sizeof(SmoothState) == 16 && std::is_trivially_copyable_v<SmoothState>);

// `Shape` supplies the two things that differ between Guava's limiters:
//   double stable_interval(p), cool_down_interval(p), max_permits(p)
//   int64  stored_permits_to_wait_time(p, stored, permits_to_take)
// Modes: max_wait == kForever is acquire(cost); otherwise tryAcquire(cost, max_wait), where
// Guava's canAcquire compares the next free ticket, before any resync, with now + timeout.
template <class Shape>
struct SmoothRateLimiter {
  using State = SmoothState;
  using Params = typename Shape::Params;

  static State resync(const Params& p, State s, std::int64_t now_us) {
    if (now_us > s.next_free_micros) {
      const double fresh =
          static_cast<double>(now_us - s.next_free_micros) / Shape::cool_down_interval(p);
      s.stored_permits = std::min(Shape::max_permits(p), s.stored_permits + fresh);
      s.next_free_micros = now_us;
    }
    return s;
  }

  static Step<State> decide(const Params& p, const State& s0, Nanos now, std::int64_t cost,
                            Nanos max_wait) {
    const std::int64_t now_us = now / kNanosPerMicro;
    if (max_wait != kForever) {
      const std::int64_t timeout_us = max_wait / kNanosPerMicro;
      if (s0.next_free_micros - timeout_us > now_us) {
        const Nanos retry =
            saturating_mul(s0.next_free_micros - timeout_us - now_us, kNanosPerMicro);
        return {denied(retry, 0, reset_after(p, s0, now_us), -1), s0};
      }
    }
    State s = resync(p, s0, now_us);
    const std::int64_t moment_available = s.next_free_micros;
    const double required = static_cast<double>(cost);
    const double from_stored = std::min(required, s.stored_permits);
    const double fresh = required - from_stored;
    // Java's long + wraps for a cost of centuries (the next ticket would move back); saturate.
    const std::int64_t wait_us =
        refmath::saturated_add(Shape::stored_permits_to_wait_time(p, s.stored_permits, from_stored),
                               refmath::java_d2l(fresh * Shape::stable_interval(p)));
    s.next_free_micros = refmath::saturated_add(s.next_free_micros, wait_us);
    s.stored_permits -= from_stored;
    Nanos delay = 0;  // Guava's wait fits a long of micros; in nanoseconds it may not
    if (__builtin_mul_overflow(std::max<std::int64_t>(moment_available - now_us, 0), kNanosPerMicro,
                               &delay)) {
      return {overflowed(), s0};
    }
    const auto remaining = refmath::java_d2l(s.stored_permits);
    return {Decision{true, delay, remaining, 0, reset_after(p, s, now_us), -1}, s};
  }

  // Until the limiter has stored its maximum again (Guava never says; informative).
  static Nanos reset_after(const Params& p, const State& s, std::int64_t now_us) {
    const double missing = Shape::max_permits(p) - s.stored_permits;
    const std::int64_t owed = std::max<std::int64_t>(s.next_free_micros - now_us, 0);
    return saturating_mul(
        refmath::saturated_add(owed, refmath::java_d2l(missing * Shape::cool_down_interval(p))),
        kNanosPerMicro);
  }

  // setRate: resync under the old parameters, then rescale stored permits to the new maximum.
  static State retune(const Params& from, const Params& to, const State& s, Nanos now) {
    State r = resync(from, s, now / kNanosPerMicro);
    const double old_max = Shape::max_permits(from);
    r.stored_permits = old_max == 0.0 ? Shape::initial_permits(to)
                                      : r.stored_permits * Shape::max_permits(to) / old_max;
    return r;
  }

  static State start(const Params& p, Nanos now) {
    return State{Shape::initial_permits(p), now / kNanosPerMicro};
  }

  static bool idle(const Params& p, const State& s, Nanos now) {
    return resync(p, s, now / kNanosPerMicro).stored_permits == Shape::initial_permits(p) &&
           s.next_free_micros <= now / kNanosPerMicro;
  }
};

}  // namespace sluice::core
