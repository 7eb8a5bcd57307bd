// Netflix concurrency-limits' WindowedLimit over its default ImmutableAverageSampleWindow
// (limit/WindowedLimit.java, limit/window/ImmutableAverageSampleWindow.java): samples are
// pooled for a window (min RTT x 2, kept within [1 s, 1 s] by default) and the inner limit sees
// one sample per window: the average RTT, the most in flight, and whether any dropped.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "sluice/adaptive/adaptive_limit.hpp"

namespace sluice::adaptive {

template <AdaptiveLimit Inner>
struct Windowed {
  // WindowedLimit.Builder's defaults.
  struct Params {
    typename Inner::Params inner;
    Nanos min_window_time = core::kNanosPerSecond;
    Nanos max_window_time = core::kNanosPerSecond;
    int window_size = 10;  // the fewest samples a window needs to count
    Nanos min_rtt_threshold = 100 * core::kNanosPerMicro;
  };
  struct Window {
    Nanos min_rtt = std::numeric_limits<Nanos>::max();
    Nanos sum = 0;
    int max_in_flight = 0;
    int count = 0;
    bool did_drop = false;
  };
  struct State {
    typename Inner::State inner;
    Window window;
    Nanos next_update_time = 0;
  };
  static_assert(std::is_trivially_copyable_v<State>);

  static State start(const Params& p, Nanos now, std::uint64_t seed) {
    return State{Inner::start(p.inner, now, seed), Window{}, 0};
  }

  // WindowedLimit.onSample. The first sample ends a window of one at once (next_update_time
  // starts at 0), which is too small to count: the reference does the same.
  static std::int64_t update(const Params& p, State& s, const Sample& x) {
    if (x.outcome == Outcome::kIgnored || x.rtt < p.min_rtt_threshold) return limit(s);
    Window& w = s.window;
    w.min_rtt = std::min(w.min_rtt, x.rtt);
    w.sum += x.rtt;
    w.max_in_flight = std::max(w.max_in_flight, static_cast<int>(x.in_flight));
    w.count++;
    w.did_drop = w.did_drop || x.outcome == Outcome::kDropped;
    if (x.end() <= s.next_update_time) return limit(s);

    const Window done = w;
    w = Window{};
    s.next_update_time =
        x.end() + std::min(std::max(done.min_rtt * 2, p.min_window_time), p.max_window_time);
    if (done.count < p.window_size) return limit(s);
    const Sample pooled{x.start, done.sum / done.count, done.max_in_flight,
                        done.did_drop ? Outcome::kDropped : Outcome::kSuccess};
    return Inner::update(p.inner, s.inner, pooled);
  }

  static std::int64_t advance(const Params& p, State& s, Nanos now) {
    return Inner::advance(p.inner, s.inner, now);
  }
  static Nanos next_event(const State& s) { return Inner::next_event(s.inner); }
  static std::int64_t limit(const State& s) { return Inner::limit(s.inner); }

  static core::Expected<Params> validate(const Params& p) {
    if (p.min_window_time < 100 * core::kNanosPerMilli ||
        p.max_window_time < 100 * core::kNanosPerMilli) {
      return core::make_error("windowed: min_window_time and max_window_time must be >= 100ms");
    }
    if (p.window_size < 10) return core::make_error("windowed: window_size must be >= 10");
    auto inner = Inner::validate(p.inner);
    if (!inner) return core::make_error(inner.error());
    return p;
  }
};

}  // namespace sluice::adaptive
