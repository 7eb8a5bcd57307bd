// Guava 31.1 SmoothBursty (RateLimiter.create(rate)): permits stored while idle, up to
// max-burst seconds' worth; starts empty; a large request goes at once and the next one pays.
#pragma once

#include <cstdint>

#include "sluice/core/rate.hpp"
#include "sluice/core/smooth_rate_limiter.hpp"

namespace sluice::core {

struct SmoothBurstyShape {
  struct Params {
    Rate rate;
    Nanos max_burst = kNanosPerSecond;
    double permits_per_second = 0;
    double stable_interval_micros = 0;  // 1e6 / permits_per_second
    double max_permits = 0;             // max_burst_seconds * permits_per_second
  };
  static double stable_interval(const Params& p) { return p.stable_interval_micros; }
  static double cool_down_interval(const Params& p) { return p.stable_interval_micros; }
  static double max_permits(const Params& p) { return p.max_permits; }
  static double initial_permits(const Params&) { return 0.0; }
  static std::int64_t stored_permits_to_wait_time(const Params&, double, double) { return 0; }
};

struct SmoothBursty : SmoothRateLimiter<SmoothBurstyShape> {
  static Params make(Rate rate, Nanos max_burst) {
    Params p;
    p.rate = rate;
    p.max_burst = max_burst;
    p.permits_per_second = rate.per_second();
    p.stable_interval_micros = 1e6 / p.permits_per_second;
    p.max_permits = (static_cast<double>(max_burst) / 1e9) * p.permits_per_second;
    return p;
  }
};

}  // namespace sluice::core
