// Guava 31.1 SmoothWarmingUp (RateLimiter.create(rate, warmup)): starts cold, serving at
// rate/cold-factor, and speeds up to the stable rate over `warmup` of steady use.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sluice/core/rate.hpp"
#include "sluice/core/reference_math.hpp"
#include "sluice/core/smooth_rate_limiter.hpp"

namespace sluice::core {

// Guava's shape, in microseconds: below thresholdPermits a stored permit costs the stable
// interval; above it, the cost rises linearly (slope) to cold-factor times the stable interval
// at maxPermits. Taking stored permits costs the area under that line (a trapezoid).
struct SmoothWarmupShape {
  struct Params {
    Rate rate;
    Nanos warmup = 0;
    double cold_factor = 3.0;
    std::int64_t warmup_micros = 0;
    double permits_per_second = 0;
    double stable_interval_micros = 0;
    double threshold_permits = 0;
    double max_permits = 0;
    double slope = 0;
  };
  static double stable_interval(const Params& p) { return p.stable_interval_micros; }
  static double cool_down_interval(const Params& p) {
    return static_cast<double>(p.warmup_micros) / p.max_permits;
  }
  static double max_permits(const Params& p) { return p.max_permits; }
  static double initial_permits(const Params& p) { return p.max_permits; }

  static double permits_to_time(const Params& p, double permits) {
    return p.stable_interval_micros + permits * p.slope;
  }

  static std::int64_t stored_permits_to_wait_time(const Params& p, double stored, double to_take) {
    const double above_threshold = stored - p.threshold_permits;
    std::int64_t micros = 0;
    if (above_threshold > 0.0) {
      const double take_above = std::min(above_threshold, to_take);
      const double length =
          permits_to_time(p, above_threshold) + permits_to_time(p, above_threshold - take_above);
      micros = refmath::java_d2l(take_above * length / 2.0);
      to_take -= take_above;
    }
    micros += refmath::java_d2l(p.stable_interval_micros * to_take);
    return micros;
  }
};

struct SmoothWarmup : SmoothRateLimiter<SmoothWarmupShape> {
  static Params make(Rate rate, Nanos warmup, double cold_factor) {
    Params p;
    p.rate = rate;
    p.warmup = warmup;
    p.cold_factor = cold_factor;
    p.warmup_micros = warmup / kNanosPerMicro;
    p.permits_per_second = rate.per_second();
    p.stable_interval_micros = 1e6 / p.permits_per_second;
    const double w = static_cast<double>(p.warmup_micros);
    const double cold_interval = p.stable_interval_micros * cold_factor;
    p.threshold_permits = 0.5 * w / p.stable_interval_micros;
    p.max_permits = p.threshold_permits + 2.0 * w / (p.stable_interval_micros + cold_interval);
    p.slope = (cold_interval - p.stable_interval_micros) / (p.max_permits - p.threshold_permits);
    return p;
  }
};

}  // namespace sluice::core
