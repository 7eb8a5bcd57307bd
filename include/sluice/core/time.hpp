// Time and duration values of the core: integer nanoseconds, and the parser for durations.
// Every algorithm takes `now` as one of these; nothing in the core reads a clock.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "sluice/core/expected.hpp"

namespace sluice::core {

// Nanoseconds on a steady time line (or a trace's virtual time line). Signed, so differences
// between two instants are plain subtraction; 2^63 ns is 292 years.
using Nanos = std::int64_t;

inline constexpr Nanos kNanosPerMicro = 1'000;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
inline constexpr Nanos kNanosPerSecond = 1'000'000'000;
inline constexpr Nanos kNanosPerMinute = 60 * kNanosPerSecond;
inline constexpr Nanos kNanosPerHour = 60 * kNanosPerMinute;

// A max-wait of kForever means "wait as long as it takes" (Guava acquire, x/time/rate Reserve).
inline constexpr Nanos kForever = std::numeric_limits<Nanos>::max();
// retry_after value for "this request can never be allowed" (cost above capacity).
inline constexpr Nanos kNever = -1;

// Parses "1500us", "250ms", "1s", "2m", "1h": plain decimal digits then a unit.
// Errors name the token and list the accepted units.
Expected<Nanos> parse_duration(std::string_view text);

// Parses a plain non-negative decimal integer (no sign, exponent or trailing text) that fits
// in int64. `what` names the value in the error ("cost", "burst").
Expected<std::int64_t> parse_count(std::string_view text, std::string_view what);

// Formats a duration with the largest unit that divides it ("250ms", "2m"), for messages.
std::string format_duration(Nanos d);

// a * b for values the caller shows to users (reset times, retry hints): saturates instead of
// wrapping. Decisions themselves use checked arithmetic and report overflow.
constexpr Nanos saturating_mul(Nanos a, Nanos b) {
  Nanos r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? -kForever : kForever;
  return r;
}
constexpr Nanos saturating_add(Nanos a, Nanos b) {
  Nanos r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b < 0 ? -kForever : kForever;
  return r;
}

// Nanoseconds rounded up to whole seconds, 0 for nothing left to wait (reset and retry
// fields that clients read in seconds).
constexpr std::int64_t ceil_seconds(Nanos d) {
  if (d <= 0) return 0;
  return d / kNanosPerSecond + (d % kNanosPerSecond != 0 ? 1 : 0);
}

// Nanoseconds rounded up to whole microseconds; the replay contract reports delays that way.
constexpr std::int64_t ceil_micros(Nanos d) {
  if (d <= 0) return d / kNanosPerMicro;
  return d / kNanosPerMicro + (d % kNanosPerMicro != 0 ? 1 : 0);
}

}  // namespace sluice::core
