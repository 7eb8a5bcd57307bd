// Gradient2, as Netflix concurrency-limits' Gradient2Limit defines it (limit/Gradient2Limit.java):
// the limit follows gradient = clamp(tolerance x long RTT / RTT, 0.5, 1), where the long RTT
// is an exponential average (ExpAvg, window 600, warm-up 10); it grows by queue_size per
// sample while latency holds, smoothed by 0.2. It ignores drops: latency alone steers it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sluice/adaptive/adaptive_limit.hpp"
#include "sluice/adaptive/exp_avg.hpp"

namespace sluice::adaptive {

struct Gradient2 {
  // Gradient2Limit.Builder's defaults (queueSize is the constant function 4 there).
  struct Params {
    int initial_limit = 20;
    int min_limit = 20;
    int max_concurrency = 200;
    double smoothing = 0.2;
    int queue_size = 4;
    int long_window = 600;
    double rtt_tolerance = 1.5;
  };
  static constexpr int kWarmup = 10;  // new ExpAvgMeasurement(longWindow, 10)

  struct State {
    double estimated_limit = 0;
    ExpAvg long_rtt;
    Nanos last_rtt = 0;
    int limit = 0;
  };
  static_assert(sizeof(State) == 48 && std::is_trivially_copyable_v<State>);

  static State start(const Params& p, Nanos, std::uint64_t) {
    State s;
    s.estimated_limit = p.initial_limit;
    s.limit = p.initial_limit;
    return s;
  }

  // Gradient2Limit._update. An RTT of 0 or less says nothing of latency (and would divide by
  // zero there); it changes nothing here.
  static std::int64_t update(const Params& p, State& s, const Sample& x) {
    if (x.outcome == Outcome::kIgnored || x.rtt <= 0) return s.limit;
    const double estimated = s.estimated_limit;
    const double queue_size = p.queue_size;
    s.last_rtt = x.rtt;
    const auto short_rtt = static_cast<double>(x.rtt);
    const double long_rtt = s.long_rtt.add(short_rtt, p.long_window, kWarmup);
    // After a long overload the average lags far above the RTT: pull it down 5% a sample.
    if (long_rtt / short_rtt > 2) s.long_rtt.value = s.long_rtt.value * 0.95;
    if (static_cast<double>(x.in_flight) < estimated / 2)
      return s.limit = static_cast<int>(estimated);

    const double gradient = std::max(0.5, std::min(1.0, p.rtt_tolerance * long_rtt / short_rtt));
    double next = estimated * gradient + queue_size;
    next = estimated * (1 - p.smoothing) + next * p.smoothing;
    next = std::max(static_cast<double>(p.min_limit),
                    std::min(static_cast<double>(p.max_concurrency), next));
    s.estimated_limit = next;
    return s.limit = static_cast<int>(next);
  }

  static std::int64_t advance(const Params&, State& s, Nanos) { return s.limit; }
  static Nanos next_event(const State&) { return kNoEvent; }
  static std::int64_t limit(const State& s) { return s.limit; }

  static core::Expected<Params> validate(const Params& p) {
    if (!(p.rtt_tolerance >= 1.0))
      return core::make_error("gradient2: rtt_tolerance must be >= 1.0");
    if (p.min_limit < 1 || p.max_concurrency < p.min_limit) {
      return core::make_error("gradient2: need 1 <= min_limit <= max_concurrency");
    }
    if (!(p.smoothing > 0 && p.smoothing <= 1)) {
      return core::make_error("gradient2: smoothing must be in (0, 1]");
    }
    if (p.long_window < 1 || p.queue_size < 0) {
      return core::make_error("gradient2: long_window >= 1 and queue_size >= 0");
    }
    return p;
  }
};
static_assert(AdaptiveLimit<Gradient2>);

}  // namespace sluice::adaptive
