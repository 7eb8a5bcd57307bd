// `on_change: proportional` (Bucket4j's PROPORTIONALLY): after a parameter change each key keeps
// the same share of its capacity it had used, instead of the same amount (A::retune's carry-over).
#pragma once

#include <algorithm>
#include <concepts>
#include <type_traits>

#include "sluice/core/fixed_window.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/core/int128.hpp"
#include "sluice/core/leaky_bucket.hpp"
#include "sluice/core/sliding_window.hpp"
#include "sluice/core/token_bucket.hpp"

namespace sluice::core {

namespace detail {
// used * to / from, rounded down; `from` > 0.
inline std::int64_t scaled(std::int64_t used, std::int64_t to, std::int64_t from) {
  return static_cast<std::int64_t>(static_cast<Int128>(used) * to / from);
}
}  // namespace detail

// Each rescale takes the state A::retune carried over (already under `to`) at `now`.

// The part of the tolerance ahead of now (TAT - now) is what is used: 8 of burst 10's 11 is
// 16 of burst 20's 21 ... scaled by the tolerances, T*(burst+1).
inline Gcra::State rescale(const Gcra::Params& from, const Gcra::Params& to, const Gcra::State& s,
                           Nanos now) {
  if (s.tat <= now || from.tolerance <= 0) return s;
  return Gcra::State{now + detail::scaled(s.tat - now, to.tolerance, from.tolerance)};
}

// Tokens in the bucket scale with the burst: 2 of 10 are 4 of 20.
inline TokenBucket::State rescale(const TokenBucket::Params& from, const TokenBucket::Params& to,
                                  const TokenBucket::State& s, Nanos) {
  if (from.burst <= 0) return s;
  const double tokens = s.tokens * static_cast<double>(to.burst) / static_cast<double>(from.burst);
  return TokenBucket::State{std::min(tokens, static_cast<double>(to.burst)), s.last};
}

// nginx's excess scales with the burst (a fresh key stays fresh).
inline LeakyBucket::State rescale(const LeakyBucket::Params& from, const LeakyBucket::Params& to,
                                  const LeakyBucket::State& s, Nanos) {
  if (s.excess == LeakyBucket::kFresh || from.burst <= 0) return s;
  return LeakyBucket::State{detail::scaled(s.excess, to.burst, from.burst), s.last_ms};
}

// The count of the window scales with the limit (a new window length started afresh already).
inline FixedWindow::State rescale(const FixedWindow::Params& from, const FixedWindow::Params& to,
                                  const FixedWindow::State& s, Nanos) {
  if (from.limit <= 0 || from.window != to.window) return s;
  return FixedWindow::State{s.index, detail::scaled(s.count, to.limit, from.limit)};
}

inline SlidingWindow::State rescale(const SlidingWindow::Params& from,
                                    const SlidingWindow::Params& to, const SlidingWindow::State& s,
                                    Nanos) {
  if (from.limit <= 0 || from.window != to.window) return s;
  return SlidingWindow::State{s.index, detail::scaled(s.prev, to.limit, from.limit),
                              detail::scaled(s.curr, to.limit, from.limit)};
}

// Whether A's state can be rescaled (the others take on_change: keep or reset only).
template <class A>
concept Rescalable = requires(const typename A::Params& p, const typename A::State& s) {
  { rescale(p, p, s, Nanos{0}) } -> std::same_as<typename A::State>;
};

}  // namespace sluice::core
