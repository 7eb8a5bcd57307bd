// Token bucket exactly as golang.org/x/time/rate 0.3.0 computes it: capacity `burst`, starts
// full, refilled continuously at `rate`; float64 tokens, as the reference keeps them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "sluice/core/decision.hpp"
#include "sluice/core/rate.hpp"
#include "sluice/core/reference_math.hpp"

namespace sluice::core {

// Reject mode (max_wait == 0) is x/time/rate's AllowN(t, n): allowed iff n <= burst and n
// tokens are there now. Wait mode is ReserveN(t, n) + DelayFrom(t): the tokens may go
// negative (a reservation); when the delay exceeds max_wait the reservation is cancelled at t,
// which moves the bucket's clock to t (CancelAt), so that state is committed even on denial.
struct TokenBucket {
  struct Params {
    Rate rate;
    std::int64_t burst = 0;
    double per_second = 0;       // derived: rate.per_second()
    double nanos_per_token = 0;  // derived, for the informative reset time only
  };
  // 16 bytes: the reference's float tokens and its last update time.
  struct State {
    double tokens = 0;
    Nanos last = 0;
  };
  static_assert(sizeof(State) == 16 && std::is_trivially_copyable_v<State>);

  static Params make(Rate rate, std::int64_t burst) {
    return {rate, burst, rate.per_second(), 1e9 / rate.per_second()};
  }

  // Time until the bucket is full again: informative (reset_after), so a multiplication by
  // the precomputed interval serves instead of the reference's exact division.
  static Nanos refill_time(const Params& p, double missing) {
    return refmath::go_duration(missing * p.nanos_per_token);
  }

  static State start(const Params& p, Nanos now) {
    return State{static_cast<double>(p.burst), now};
  }

  // Tokens after refilling up to `now` (x/time/rate's advance).
  static double advance(const Params& p, const State& s, Nanos now) {
    Nanos last = std::min(s.last, now);
    double tokens = s.tokens + refmath::go_seconds(now - last) * p.per_second;
    return std::min(tokens, static_cast<double>(p.burst));
  }

  // Time to accumulate `tokens` (durationFromTokens): truncated to whole nanoseconds.
  static Nanos duration_for(const Params& p, double tokens) {
    return refmath::go_duration(1e9 * (tokens / p.per_second));
  }

  static Step<State> decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                            Nanos max_wait) {
    const double available = advance(p, s, now);
    const double after = available - static_cast<double>(cost);
    const Nanos wait = after < 0 ? duration_for(p, -after) : 0;
    const Nanos reset = refill_time(p, static_cast<double>(p.burst) - std::max(after, 0.0));
    if (cost <= p.burst && wait <= max_wait) {
      Decision d{true, wait,  static_cast<std::int64_t>(std::floor(std::max(after, 0.0))),
                 0,    reset, p.burst};
      return {d, State{after, now}};
    }
    const Nanos retry = cost > p.burst ? kNever : std::max<Nanos>(wait, 1);
    Decision d = denied(retry, static_cast<std::int64_t>(std::floor(available)),
                        refill_time(p, static_cast<double>(p.burst) - available), p.burst);
    if (max_wait > 0 && cost <= p.burst) {
      // ReserveN succeeded, then CancelAt(now) restored the tokens at now.
      double restored = std::min(after + static_cast<double>(cost), static_cast<double>(p.burst));
      return {d, State{restored, now}, true};
    }
    return {d, s};
  }

  // SetLimitAt/SetBurstAt: advance the bucket to `now` under the old parameters, keep tokens.
  static State retune(const Params& from, const Params& /*to*/, const State& s, Nanos now) {
    return State{advance(from, s, now), now};
  }

  // Full again: indistinguishable from a key never seen.
  static bool idle(const Params& p, const State& s, Nanos now) {
    return advance(p, s, now) >= static_cast<double>(p.burst);
  }
};

}  // namespace sluice::core
