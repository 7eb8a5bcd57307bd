// Test support: time, rates and extremes written the way people say them (ms(250), sec(1),
// per_second(10)). Tests bring them in with `using namespace sluice::test::units;`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "sluice/core/rate.hpp"
#include "sluice/core/time.hpp"

namespace sluice::test::units {

constexpr core::Nanos us(std::int64_t n) { return n * core::kNanosPerMicro; }
constexpr core::Nanos ms(std::int64_t n) { return n * core::kNanosPerMilli; }
constexpr core::Nanos sec(std::int64_t n) { return n * core::kNanosPerSecond; }
constexpr core::Nanos hours(std::int64_t n) { return n * core::kNanosPerHour; }

// A second and a mebibyte as constants, for the tests that name them often.
constexpr core::Nanos kSecond = core::kNanosPerSecond;
constexpr std::size_t kMiB = std::size_t{1} << 20;

constexpr core::Rate per_second(std::int64_t n) { return core::Rate{n, core::kNanosPerSecond}; }

// The latest instant a replay trace can name: its largest t_us, in nanoseconds (292 years).
constexpr core::Nanos kEndOfTime = std::numeric_limits<std::int64_t>::max() / 1000 * 1000;
// The largest cost a trace line can carry.
constexpr std::int64_t kHugeCost = std::numeric_limits<std::int64_t>::max();

}  // namespace sluice::test::units
