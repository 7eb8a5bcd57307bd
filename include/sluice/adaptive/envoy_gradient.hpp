// Envoy's adaptive_concurrency gradient controller (source/extensions/filters/http/
// adaptive_concurrency/controller/gradient_controller.cc, defaults from its config and
// api/.../adaptive_concurrency/v3/adaptive_concurrency.proto) as a pure state machine. Envoy's
// two timers (the sample window reset, the next minRTT window) are deadlines in the state that
// advance() fires in time order, each as if at its deadline; randomness is a seeded SplitMix64.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "sluice/adaptive/adaptive_limit.hpp"
#include "sluice/adaptive/log_linear_histogram.hpp"
#include "sluice/adaptive/random.hpp"

namespace sluice::adaptive {

struct EnvoyGradient {
  // Percentages are as Envoy's config takes them (0-100, clamped there as here).
  struct Params {
    // concurrency_limit_params.concurrency_update_interval: required by Envoy (no default).
    Nanos update_interval = 100 * core::kNanosPerMilli;
    std::uint32_t max_concurrency_limit = 1000;  // concurrency_limit_params
    double sample_aggregate_percentile = 50;
    // min_rtt_calc_params.interval: required by Envoy's proto as stored (no default).
    Nanos min_rtt_interval = 60 * core::kNanosPerSecond;
    std::uint32_t request_count = 50;   // samples that end a minRTT window
    double jitter = 15;                 // percent of the interval added at random, [0, x)
    std::uint32_t min_concurrency = 3;  // the limit during a minRTT window, and the floor
    double buffer = 25;                 // percent added to the minRTT in the gradient
  };

  struct State {
    LogLinearHistogram samples;      // latency_sample_hist_, whole microseconds
    Nanos min_rtt = 0;               // min_rtt_
    Nanos sample_rtt = 0;            // sample_rtt_
    Nanos min_rtt_epoch = 0;         // samples of requests sent before it are disregarded
    Nanos min_rtt_timer = kNoEvent;  // min_rtt_calc_timer_: the next minRTT window
    Nanos sample_timer = kNoEvent;   // sample_reset_timer_: the next sample window reset
    SplitMix64 random;
    std::uint32_t limit = 0;            // concurrency_limit_
    std::uint32_t deferred_limit = 0;   // deferred_limit_value_: > 0 inside a minRTT window
    std::uint32_t consecutive_min = 0;  // consecutive_min_concurrency_set_
  };
  static_assert(std::is_trivially_copyable_v<State>);

  // The constructor: the limit starts at min_concurrency, in a minRTT window at once.
  static State start(const Params& p, Nanos now, std::uint64_t seed) {
    State s;
    s.random.state = seed;
    s.limit = p.min_concurrency;
    enter_min_rtt_window(p, s, now);
    s.sample_timer = now + p.update_interval;
    return s;
  }

  // recordLatencySample (kSuccess and kDropped: Envoy samples every response it encodes) or
  // cancelLatencySample (kIgnored: nothing to learn), at the request's end; what was due before
  // it fires first.
  static std::int64_t update(const Params& p, State& s, const Sample& x) {
    const Nanos now = x.end();
    advance(p, s, now);
    if (x.outcome == Outcome::kIgnored || x.start < s.min_rtt_epoch) return s.limit;
    s.samples.insert(x.rtt / core::kNanosPerMicro);  // duration_cast<microseconds> truncates
    update_min_rtt(p, s, now);
    return s.limit;
  }

  static std::int64_t advance(const Params& p, State& s, Nanos now) {
    for (;;) {
      const Nanos due = std::min(s.min_rtt_timer, s.sample_timer);
      if (due > now) return s.limit;
      if (s.min_rtt_timer == due) {
        s.min_rtt_timer = kNoEvent;
        enter_min_rtt_window(p, s, due);
      } else {
        s.sample_timer = kNoEvent;
        on_sample_timer(p, s, due, now);
      }
    }
  }

  static Nanos next_event(const State& s) { return std::min(s.min_rtt_timer, s.sample_timer); }
  static std::int64_t limit(const State& s) { return s.limit; }
  static bool in_min_rtt_window(const State& s) { return s.deferred_limit > 0; }

  // The proto's rules: intervals > 0 (the minRTT one >= 1 ms), counts > 0.
  static core::Expected<Params> validate(const Params& p) {
    if (p.update_interval < core::kNanosPerMilli || p.min_rtt_interval < core::kNanosPerMilli) {
      return core::make_error(
          "envoy-gradient: update_interval and min_rtt_interval must be >= 1ms");
    }
    if (p.max_concurrency_limit == 0 || p.request_count == 0 || p.min_concurrency == 0) {
      return core::make_error(
          "envoy-gradient: max_concurrency_limit, request_count and min_concurrency must be > 0");
    }
    return p;
  }

  static double fraction(double percent) { return std::max(0.0, std::min(percent, 100.0)) / 100.0; }

  // calculateNewLimit: gradient = clamp(minRTT x (1 + buffer) / sampleRTT, 0.5, 2); the new
  // limit is limit x gradient plus its square root (the burst headroom), truncated, within
  // [min_concurrency, max_concurrency_limit].
  static std::uint32_t new_limit(const Params& p, const State& s) {
    const double buffered_min_rtt =
        static_cast<double>(s.min_rtt) + static_cast<double>(s.min_rtt) * fraction(p.buffer);
    const double raw_gradient = buffered_min_rtt / static_cast<double>(s.sample_rtt);
    const double gradient = std::max<double>(0.5, std::min<double>(2.0, raw_gradient));
    const double limit = s.limit * gradient;
    const double burst_headroom = std::sqrt(limit);
    const auto next = static_cast<std::uint32_t>(limit + burst_headroom);
    return std::max<std::uint32_t>(p.min_concurrency,
                                   std::min<std::uint32_t>(p.max_concurrency_limit, next));
  }

 private:
  static void enter_min_rtt_window(const Params& p, State& s, Nanos now) {
    if (in_min_rtt_window(s)) return;
    s.deferred_limit = s.limit;
    set_limit(p, s, p.min_concurrency, now);
    s.samples.clear();
    s.min_rtt_epoch = now;
  }

  static void update_min_rtt(const Params& p, State& s, Nanos now) {
    if (!in_min_rtt_window(s) || s.samples.count() < p.request_count) return;
    s.min_rtt = take_quantile(p, s);
    set_limit(p, s, s.deferred_limit, now);
    s.deferred_limit = 0;
    s.min_rtt_timer = now + jittered(p, s);
    s.sample_timer = now + p.update_interval;
  }

  // The sample reset timer: idle (and not re-armed) inside a minRTT window; update_min_rtt
  // re-arms it when the window ends.
  // An idle stretch (no samples) fires it many times over doing nothing but re-arm: those
  // firings up to `until` (never reaching the minRTT timer, which goes first on a tie) are
  // taken in one step, so an advance after an hour's silence is not 36000 iterations.
  static void on_sample_timer(const Params& p, State& s, Nanos now, Nanos until) {
    if (in_min_rtt_window(s)) return;
    if (s.samples.count() > 0) {
      s.sample_rtt = take_quantile(p, s);
      set_limit(p, s, new_limit(p, s), now);
      s.sample_timer = now + p.update_interval;
      return;
    }
    const Nanos last = std::min(until, s.min_rtt_timer == kNoEvent ? until : s.min_rtt_timer - 1);
    const Nanos skipped = last > now ? (last - now) / p.update_interval : 0;
    s.sample_timer = now + (skipped + 1) * p.update_interval;
  }

  // processLatencySamplesAndClear: the percentile, cast to whole microseconds.
  static Nanos take_quantile(const Params& p, State& s) {
    const double q = s.samples.quantile(fraction(p.sample_aggregate_percentile));
    s.samples.clear();
    return static_cast<Nanos>(static_cast<int>(q)) * core::kNanosPerMicro;
  }

  // updateConcurrencyLimit: five windows in a row at the floor, outside a minRTT window, mean
  // the minRTT is likely wrong: measure it again now.
  static void set_limit(const Params& p, State& s, std::uint32_t next, Nanos now) {
    const std::uint32_t old = s.limit;
    s.limit = next;
    if (!in_min_rtt_window(s) && old == p.min_concurrency && next == p.min_concurrency) {
      ++s.consecutive_min;
    } else {
      s.consecutive_min = 0;
    }
    if (s.consecutive_min >= 5) s.min_rtt_timer = now;
  }

  // applyJitter, in whole milliseconds as Envoy's timers take them.
  static Nanos jittered(const Params& p, State& s) {
    const std::int64_t interval_ms = p.min_rtt_interval / core::kNanosPerMilli;
    const double pct = fraction(p.jitter);
    if (pct == 0) return interval_ms * core::kNanosPerMilli;
    const auto range =
        static_cast<std::uint32_t>(std::ceil(static_cast<double>(interval_ms) * pct));
    const auto extra = static_cast<std::int64_t>(s.random.next() % range);
    return (interval_ms + extra) * core::kNanosPerMilli;
  }
};
static_assert(AdaptiveLimit<EnvoyGradient>);

}  // namespace sluice::adaptive
