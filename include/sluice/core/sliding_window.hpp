// Sliding window counter (the two-window estimate of Cloudflare and Kong's sliding windows):
// prev * (window - t mod window) / window + curr + cost <= limit, counting allowed requests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sluice/core/decision.hpp"
#include "sluice/core/int128.hpp"

namespace sluice::core {

// The comparison is done in 128-bit integers, multiplied through by `window`, so it is exact:
// no float rounding decides a boundary case.
struct SlidingWindow {
  struct Params {
    std::int64_t limit = 0;
    Nanos window = 0;
  };
  struct State {
    std::int64_t index = 0;  // window of `curr`
    std::int64_t prev = 0;   // allowed cost in window index-1
    std::int64_t curr = 0;   // allowed cost in window index
  };
  static_assert(sizeof(State) == 24 && std::is_trivially_copyable_v<State>);

  static State start(const Params& p, Nanos now) { return State{now / p.window, 0, 0}; }

  // The state as seen from `now`: windows rolled forward.
  static State roll(const Params& p, const State& s, Nanos now) {
    const std::int64_t index = now / p.window;
    if (index == s.index) return s;
    if (index == s.index + 1) return State{index, s.curr, 0};
    return State{index, 0, 0};
  }

  static Step<State> decide(const Params& p, const State& s0, Nanos now, std::int64_t cost,
                            Nanos /*max_wait: reject only*/) {
    const State s = roll(p, s0, now);
    const Int128 w = p.window;
    const Int128 left = w - (now - s.index * p.window);          // window - t mod window
    const Int128 weighted = static_cast<Int128>(s.prev) * left;  // prev share, times w
    const Int128 total = weighted + (static_cast<Int128>(s.curr) + cost) * w;
    const Nanos reset = saturating_add(static_cast<Nanos>(left), s.curr > 0 ? p.window : 0);
    if (total <= static_cast<Int128>(p.limit) * w) {
      const auto rem = static_cast<std::int64_t>((static_cast<Int128>(p.limit) * w - total) / w);
      return {Decision{true, 0, rem, 0, reset, p.limit}, State{s.index, s.prev, s.curr + cost}};
    }
    const Int128 before = weighted + static_cast<Int128>(s.curr) * w;
    const Int128 rem = static_cast<Int128>(p.limit) * w - before;
    return {denied(retry_after(p, s, now, cost), rem > 0 ? static_cast<std::int64_t>(rem / w) : 0,
                   reset, p.limit),
            s0};
  }

  // Earliest wait after which prev' * (w - x)/w + curr' + cost <= limit: later in this window
  // as prev's weight shrinks, else in the next window where curr becomes prev.
  static Nanos retry_after(const Params& p, const State& s, Nanos now, std::int64_t cost) {
    if (cost > p.limit) return kNever;
    const Int128 w = p.window;
    const Nanos offset = now - s.index * p.window;
    auto earliest_offset = [&](std::int64_t prev, std::int64_t curr) -> Int128 {
      // smallest x in [0, w) with prev*(w-x) <= (limit-curr-cost)*w, or -1
      const Int128 room = (static_cast<Int128>(p.limit) - curr - cost) * w;
      if (room < 0) return -1;
      if (prev == 0) return 0;
      Int128 x = w - room / prev;
      return std::max<Int128>(x, 0);
    };
    const Int128 here = earliest_offset(s.prev, s.curr);
    if (here >= 0 && here < w && here > offset) return static_cast<Nanos>(here - offset);
    const Int128 next = earliest_offset(s.curr, 0);
    if (next >= 0 && next < w) return static_cast<Nanos>(w - offset + next);
    return static_cast<Nanos>(2 * w - offset);
  }

  static State retune(const Params& from, const Params& to, const State& s, Nanos now) {
    if (from.window != to.window) return start(to, now);
    return s;
  }

  static bool idle(const Params& p, const State& s, Nanos now) {
    const State r = roll(p, s, now);
    return r.prev == 0 && r.curr == 0;
  }
};

}  // namespace sluice::core
