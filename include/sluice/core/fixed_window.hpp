// Fixed window counter: windows at multiples of `window` from t=0; a request is allowed iff
// the window's count plus its cost stays within `limit`. Denied requests do not count.
#pragma once

#include <cstdint>
#include <type_traits>

#include "sluice/core/decision.hpp"

namespace sluice::core {

// Cheapest of all and the most common in gateways (envoyproxy/ratelimit, Kong), with the flaw
// the window algorithms below exist to fix: up to 2*limit pass across a window boundary.
struct FixedWindow {
  struct Params {
    std::int64_t limit = 0;
    Nanos window = 0;
  };
  struct State {
    std::int64_t index = 0;  // now / window of the counted window
    std::int64_t count = 0;
  };
  static_assert(sizeof(State) == 16 && std::is_trivially_copyable_v<State>);

  static State start(const Params& p, Nanos now) { return State{now / p.window, 0}; }

  static Step<State> decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                            Nanos /*max_wait: reject only*/) {
    const std::int64_t index = now / p.window;
    const std::int64_t count = index == s.index ? s.count : 0;
    const Nanos reset = p.window - now % p.window;
    if (cost <= p.limit - count) {
      const std::int64_t after = count + cost;
      return {Decision{true, 0, p.limit - after, 0, reset, p.limit}, State{index, after}};
    }
    return {denied(cost > p.limit ? kNever : reset, p.limit - count, reset, p.limit), s};
  }

  static State retune(const Params& from, const Params& to, const State& s, Nanos now) {
    // A new window length starts a new window; the same length keeps the count.
    if (from.window != to.window) return start(to, now);
    return s;
  }

  static bool idle(const Params& p, const State& s, Nanos now) {
    return s.count == 0 || now / p.window != s.index;
  }
};

}  // namespace sluice::core
