// Leaky bucket exactly as nginx 1.22's limit_req computes it: a millisecond clock, the excess
// kept in 1/1000 requests, the rate in whole milli-requests per second, burst and delay=N.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "sluice/core/decision.hpp"
#include "sluice/core/int128.hpp"
#include "sluice/core/rate.hpp"

namespace sluice::core {

// Per request (ngx_http_limit_req_lookup + ngx_http_limit_req_account):
//   ms     = now_ms - last_ms            (clamped as nginx does for a clock going back)
//   excess = max(0, excess - rate*ms/1000 + 1000*cost)
//   reject if excess > burst*1000, else store excess, and last = now_ms only if ms != 0
//   delay  = (excess - delay*1000) * 1000 / rate ms when excess > delay*1000, else 0
// A new key's first request always passes and leaves excess 0, whatever its cost: nginx
// creates the node with excess 0 and checks nothing (so burst+1 requests pass at one instant);
// the cost enters from the second request on. The bucket's own delaying applies in reject and
// wait mode alike.
struct LeakyBucket {
  static constexpr std::int64_t kNoDelay = std::numeric_limits<std::int64_t>::max() / 1000;

  struct Params {
    Rate rate;
    std::int64_t rate_milli = 0;  // whole milli-requests per second (100/m -> 1666)
    std::int64_t burst = 0;       // requests
    std::int64_t delay = 0;       // excess requests let through undelayed; kNoDelay = nodelay
  };
  // 16 bytes: nginx's node keeps the same two numbers (plus its tree and LRU links).
  struct State {
    std::int64_t excess = 0;  // milli-requests; kFresh for a key that has not yet passed
    std::int64_t last_ms = 0;
  };
  static_assert(sizeof(State) == 16 && std::is_trivially_copyable_v<State>);
  static constexpr std::int64_t kFresh = std::numeric_limits<std::int64_t>::min();

  // rate_milli is 0 when the rate is below 1/1000 per second: nginx cannot express it.
  static Params make(Rate rate, std::int64_t burst, std::int64_t delay) {
    Int128 milli = static_cast<Int128>(rate.count) * 1000 * kNanosPerSecond / rate.period;
    if (milli > std::numeric_limits<std::int64_t>::max() / 1000) milli = 0;
    return Params{rate, static_cast<std::int64_t>(milli), burst, delay};
  }

  static State start(const Params&, Nanos now) { return State{kFresh, now / kNanosPerMilli}; }

  static Step<State> decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                            Nanos /*max_wait: nginx delays by its own rule*/) {
    const std::int64_t now_ms = now / kNanosPerMilli;
    std::int64_t ms = now_ms - s.last_ms;
    if (ms < -60000) {
      ms = 1;
    } else if (ms < 0) {
      ms = 0;
    }
    const Int128 c1000 = static_cast<Int128>(cost) * 1000;
    const Int128 burst1000 = static_cast<Int128>(p.burst) * 1000;
    Int128 excess;
    if (s.excess == kFresh) {
      excess = 0;
      ms = 0;
    } else {
      excess = s.excess - static_cast<Int128>(p.rate_milli) * ms / 1000 + c1000;
      if (excess < 0) excess = 0;
    }
    if (excess > burst1000) {
      return {denied(retry_after(p, s, now, now_ms, c1000, burst1000), remaining(p, s.excess),
                     drain_time(p, std::max<std::int64_t>(s.excess, 0)), p.burst + 1),
              s};
    }
    const auto e = static_cast<std::int64_t>(excess);
    State next{e, ms != 0 || s.excess == kFresh ? now_ms : s.last_ms};
    Nanos delay = 0;
    if (p.delay != kNoDelay && e > p.delay * 1000) {
      const Int128 delay_ms = static_cast<Int128>(e - p.delay * 1000) * 1000 / p.rate_milli;
      if (delay_ms > kForever / kNanosPerMilli) return {overflowed(), s};
      delay = static_cast<Nanos>(delay_ms) * kNanosPerMilli;
    }
    // Cost 0 (a peek) leaves a new key new: all burst + 1 of its first instant are still there.
    const std::int64_t left = remaining(p, cost == 0 && s.excess == kFresh ? kFresh : e);
    return {Decision{true, delay, left, 0, drain_time(p, e), p.burst + 1}, next};
  }

  static std::int64_t remaining(const Params& p, std::int64_t excess) {
    if (excess == kFresh) return p.burst + 1;
    return std::max<std::int64_t>(0, (p.burst * 1000 - excess) / 1000);
  }

  // Until the excess has leaked away (informative: reset_after).
  static Nanos drain_time(const Params& p, std::int64_t excess) {
    const Int128 ms = static_cast<Int128>(excess) * 1000 / p.rate_milli;
    return ms > kForever / kNanosPerMilli ? kForever : static_cast<Nanos>(ms) * kNanosPerMilli;
  }

  // The first whole millisecond at which rate*ms/1000 has leaked enough for this request.
  static Nanos retry_after(const Params& p, const State& s, Nanos now, std::int64_t now_ms,
                           Int128 c1000, Int128 burst1000) {
    const Int128 need = s.excess + c1000 - burst1000;  // milli-requests to leak
    const Int128 ms = (need * 1000 + p.rate_milli - 1) / p.rate_milli;
    const Int128 at = (static_cast<Int128>(s.last_ms) + ms) * kNanosPerMilli;
    const Int128 wait = at - now;
    (void)now_ms;
    if (wait > std::numeric_limits<Nanos>::max()) return kNever;
    return std::max<Nanos>(static_cast<Nanos>(wait), 1);
  }

  // nginx keeps excess and last across a reload that changes rate or burst; so do we.
  static State retune(const Params&, const Params&, const State& s, Nanos) { return s; }

  // nginx's own expiry rule (ngx_http_limit_req_expire): a node idle for 60 s whose excess
  // has leaked away is dropped, and the key starts afresh. Matching it keeps drops invisible.
  static bool idle(const Params& p, const State& s, Nanos now) {
    if (s.excess == kFresh) return true;
    const std::int64_t ms = now / kNanosPerMilli - s.last_ms;
    if (ms < 60000) return false;
    return s.excess - static_cast<Int128>(p.rate_milli) * ms / 1000 <= 0;
  }
};

}  // namespace sluice::core
