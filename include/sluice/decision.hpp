// The public API's answer and its time line: a Decision says whether a request goes now,
// after a wait, or not at all, with the numbers a client is told (remaining, retry-after).
// Installed with libsluice; includes only the standard library (C++17 or later).
#pragma once

#include <chrono>
#include <cstdint>

#include "sluice/limit.hpp"

namespace sluice {

// Limiters read std::chrono::steady_clock unless the caller passes `now`. Injected times are
// steady_clock time points too, so a test or a trace replay builds them from its own virtual
// clock: Time{std::chrono::milliseconds(1500)}. Use one time line per limiter: a limiter
// started at Clock::now() and then fed virtual times sees time go backwards, and holds still.
using Clock = std::chrono::steady_clock;
using Time = Clock::time_point;

// max_wait: wait as long as it takes (Guava acquire, x/time/rate Reserve).
inline constexpr Duration kForever = Duration::max();
// retry_after: this request can never be admitted (its cost is above the limit's capacity,
// or its arithmetic would overflow 64-bit nanoseconds).
inline constexpr Duration kNever = Duration::max();

struct Decision {
  bool allowed = false;
  // An allowed request proceeds after this wait (0: at once). 0 when denied.
  Duration wait{0};
  // Whole permits left after the decision; -1 where the algorithm has no such notion.
  std::int64_t remaining = -1;
  // A denied request: the earliest wait after which the same request would be allowed, or
  // kNever. 0 when allowed.
  Duration retry_after{0};
  // Time until the limiter is back to its idle state (a RateLimit-Reset header's value).
  Duration reset_after{0};
  // The capacity a client is told, in permits; -1 where not meaningful.
  std::int64_t limit = -1;

  explicit operator bool() const { return allowed; }
};

}  // namespace sluice
