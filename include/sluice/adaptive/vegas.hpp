// Vegas, as Netflix concurrency-limits' VegasLimit defines it (limit/VegasLimit.java, with
// its default functions from limit/functions/Log10RootIntFunction.java): the queue an RTT
// implies, limit x (1 - rtt_noload / rtt), steers the limit; rtt_noload is the least RTT seen,
// re-probed every probe_multiplier x limit samples (times a jitter in [0.5, 1)).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "sluice/adaptive/adaptive_limit.hpp"
#include "sluice/adaptive/random.hpp"

namespace sluice::adaptive {

// Log10RootIntFunction.create(0): max(1, (int) log10(t)) below 1000 (its lookup table), then
// (int) log10(t). Java's (int) of log10(0) = -inf is Integer.MIN_VALUE, so 0 gives 1 too.
constexpr int log10_root(int t) {
  if (t < 1000) {
    if (t < 1) return 1;
    int digits = 0;
    for (int v = t; v >= 10; v /= 10) ++digits;
    return std::max(1, digits);
  }
  return static_cast<int>(std::log10(static_cast<double>(t)));
}

struct Vegas {
  // VegasLimit.Builder's defaults. alpha, beta: 0 means the default functions of the limit,
  // 3 x log10_root and 6 x log10_root; a positive value is the builder's alpha(int), beta(int).
  // threshold, increase and decrease are the defaults: log10_root(limit), limit +/- log10_root.
  struct Params {
    int initial_limit = 20;
    int max_concurrency = 1000;
    double smoothing = 1.0;
    int probe_multiplier = 30;
    int alpha = 0;
    int beta = 0;
  };
  struct State {
    double estimated_limit = 0;
    double probe_jitter = 0;  // ThreadLocalRandom.nextDouble(0.5, 1), drawn at each probe
    Nanos rtt_noload = 0;
    SplitMix64 random;
    int limit = 0;  // AbstractLimit.limit: what _update last returned
    int probe_count = 0;
  };
  static_assert(sizeof(State) == 40 && std::is_trivially_copyable_v<State>);

  static State start(const Params& p, Nanos, std::uint64_t seed) {
    State s;
    s.estimated_limit = p.initial_limit;
    s.limit = p.initial_limit;
    s.random.state = seed;
    s.probe_jitter = s.random.next_double(0.5, 1);
    return s;
  }

  // VegasLimit._update. An RTT of 0 or less is refused there (IllegalArgumentException,
  // before anything changes); here it changes nothing either.
  static std::int64_t update(const Params& p, State& s, const Sample& x) {
    if (x.outcome == Outcome::kIgnored || x.rtt <= 0) return s.limit;
    s.probe_count++;
    if (s.probe_jitter * p.probe_multiplier * s.estimated_limit <= s.probe_count) {
      s.probe_jitter = s.random.next_double(0.5, 1);
      s.probe_count = 0;
      s.rtt_noload = x.rtt;
      return s.limit = static_cast<int>(s.estimated_limit);
    }
    if (s.rtt_noload == 0 || x.rtt < s.rtt_noload) {
      s.rtt_noload = x.rtt;
      return s.limit = static_cast<int>(s.estimated_limit);
    }
    return s.limit = update_estimated_limit(p, s, x);
  }

  static std::int64_t advance(const Params&, State& s, Nanos) { return s.limit; }
  static Nanos next_event(const State&) { return kNoEvent; }
  static std::int64_t limit(const State& s) { return s.limit; }

  static core::Expected<Params> validate(const Params& p) {
    if (p.initial_limit < 1 || p.max_concurrency < 1) {
      return core::make_error("vegas: initial_limit and max_concurrency must be at least 1");
    }
    if (!(p.smoothing > 0 && p.smoothing <= 1)) {
      return core::make_error("vegas: smoothing must be in (0, 1]");
    }
    if (p.probe_multiplier < 1) return core::make_error("vegas: probe_multiplier must be >= 1");
    if (p.alpha < 0 || p.beta < 0) return core::make_error("vegas: alpha and beta are >= 0");
    return p;
  }

 private:
  // VegasLimit.updateEstimatedLimit.
  static int update_estimated_limit(const Params& p, State& s, const Sample& x) {
    const double estimated = s.estimated_limit;
    const auto queue_size = static_cast<int>(std::ceil(
        estimated * (1 - static_cast<double>(s.rtt_noload) / static_cast<double>(x.rtt))));
    double next = 0;
    if (x.outcome == Outcome::kDropped) {
      next = decrease(estimated);
    } else if (static_cast<double>(x.in_flight * 2) < estimated) {
      return static_cast<int>(estimated);  // app-limited: no upward drift
    } else {
      const int whole = static_cast<int>(estimated);
      const int alpha = p.alpha > 0 ? p.alpha : 3 * log10_root(whole);
      const int beta = p.beta > 0 ? p.beta : 6 * log10_root(whole);
      const int threshold = log10_root(whole);
      if (queue_size <= threshold) {
        next = estimated + beta;
      } else if (queue_size < alpha) {
        next = estimated + log10_root(whole);
      } else if (queue_size > beta) {
        next = decrease(estimated);
      } else {
        return whole;
      }
    }
    next = std::max(1.0, std::min(static_cast<double>(p.max_concurrency), next));
    next = (1 - p.smoothing) * estimated + p.smoothing * next;
    s.estimated_limit = next;
    return static_cast<int>(next);
  }

  static double decrease(double limit) { return limit - log10_root(static_cast<int>(limit)); }
};
static_assert(AdaptiveLimit<Vegas>);

}  // namespace sluice::adaptive
