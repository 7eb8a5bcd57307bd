// Numeric conversions exactly as the float-based references perform them (Go, Java), without
// C++'s undefined behaviour on out-of-range values. Used by the algorithms that mirror them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "sluice/core/time.hpp"

namespace sluice::core::refmath {

inline constexpr double kInt64MaxAsDouble = 9223372036854775807.0;  // rounds to 2^63

// Java's (long) cast of a double: truncation toward zero, saturating, NaN -> 0.
inline std::int64_t java_d2l(double x) {
  if (std::isnan(x)) return 0;
  if (x >= kInt64MaxAsDouble) return std::numeric_limits<std::int64_t>::max();
  if (x <= -kInt64MaxAsDouble) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(x);
}

// Java's Math.round(double) (JDK 7+): the closest long, ties toward positive infinity.
inline std::int64_t java_round(double x) {
  if (std::isnan(x)) return 0;
  double f = std::floor(x);
  std::int64_t r = java_d2l(f);
  if (x - f >= 0.5 && r != std::numeric_limits<std::int64_t>::max()) ++r;
  return r;
}

// Guava's LongMath.saturatedAdd.
inline std::int64_t saturated_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  }
  return r;
}

// Go's time.Duration.Seconds(): whole seconds plus the fraction, each converted separately.
inline double go_seconds(Nanos d) {
  Nanos sec = d / kNanosPerSecond;
  Nanos nsec = d % kNanosPerSecond;
  return static_cast<double>(sec) + static_cast<double>(nsec) / 1e9;
}

// Go's time.Duration(f) conversion for the values x/time/rate produces. Go leaves
// out-of-range conversions implementation-defined; we saturate, which only matters for waits
// of centuries that every caller treats as "too long" anyway.
inline Nanos go_duration(double ns) { return java_d2l(ns); }

}  // namespace sluice::core::refmath
