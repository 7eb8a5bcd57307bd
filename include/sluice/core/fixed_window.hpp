// Fixed window counter: windows at multiples of `window` from t=0, or calendar days, weeks or
// months in a time zone; a request is allowed iff the window's count plus its cost stays
// within `limit`. Denied requests do not count.
#pragma once

#include <cstdint>
#include <type_traits>

#include "sluice/core/calendar.hpp"
#include "sluice/core/decision.hpp"

namespace sluice::core {

// Cheapest of all and the most common in gateways (envoyproxy/ratelimit, Kong), with the flaw
// the window algorithms below exist to fix: up to 2*limit pass across a window boundary.
struct FixedWindow {
  struct Params {
    std::int64_t limit = 0;
    Nanos window = 0;  // with a calendar, its nominal length (RateLimit-Policy's w)
    // Set: windows are this calendar's (align=calendar), and `now` is Unix time. It lives as
    // long as the process (spec/calendar_zones.hpp interns it), so Params stays a value.
    const Calendar* calendar = nullptr;
  };
  struct State {
    std::int64_t index = 0;  // now / window of the counted window
    std::int64_t count = 0;
  };
  static_assert(sizeof(State) == 16 && std::is_trivially_copyable_v<State>);

  // The window `now` is in: its index, and the time from `now` to its end (a time left, not
  // an end instant: `now` may be near the clock's range end, where an instant overflows).
  struct Window {
    std::int64_t index;
    Nanos left;
  };
  static Window window_at(const Params& p, Nanos now) {
    if (p.calendar != nullptr) {
      const CalendarWindow w = p.calendar->window_at(now);
      return {w.index, w.end - now};
    }
    return {now / p.window, p.window - now % p.window};
  }

  static State start(const Params& p, Nanos now) { return State{window_at(p, now).index, 0}; }

  static Step<State> decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                            Nanos /*max_wait: reject only*/) {
    const Window w = window_at(p, now);
    const std::int64_t index = w.index;
    const std::int64_t count = index == s.index ? s.count : 0;
    const Nanos reset = w.left;
    if (cost <= p.limit - count) {
      const std::int64_t after = count + cost;
      return {Decision{true, 0, p.limit - after, 0, reset, p.limit}, State{index, after}};
    }
    return {denied(cost > p.limit ? kNever : reset, p.limit - count, reset, p.limit), s};
  }

  static State retune(const Params& from, const Params& to, const State& s, Nanos now) {
    // A new window length starts a new window; the same length keeps the count.
    if (from.window != to.window || from.calendar != to.calendar) return start(to, now);
    return s;
  }

  static bool idle(const Params& p, const State& s, Nanos now) {
    return s.count == 0 || window_at(p, now).index != s.index;
  }
};

}  // namespace sluice::core
