// What counting a refused request means, per algorithm (a rule's `count_denied: true`, Kong's
// penalty): the state after charging a request that was not admitted.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sluice/core/fixed_window.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/core/sliding_window.hpp"
#include "sluice/core/token_bucket.hpp"

namespace sluice::core {

// Only the algorithms below count denials; the others (queues, delays, concurrency, the
// Guava limiters) have no meaning for it, and check-config refuses the field on them.
template <class A>
struct DeniedCharge;

// The window fills up, to its limit at most: it stays full until it ends. A refused cost of 1
// finds it full already, so only a refused larger cost changes anything.
template <>
struct DeniedCharge<FixedWindow> {
  static FixedWindow::State charge(const FixedWindow::Params& p, const FixedWindow::State& s,
                                   Nanos now, std::int64_t cost) {
    const auto w = FixedWindow::window_at(p, now);
    const std::int64_t count = w.index == s.index ? s.count : 0;
    return {w.index, std::min(p.limit, count + cost)};
  }
};

// As the fixed window, and the count carries into the next window's weighted share: a key
// that keeps asking while refused is refused longer.
template <>
struct DeniedCharge<SlidingWindow> {
  static SlidingWindow::State charge(const SlidingWindow::Params& p, const SlidingWindow::State& s0,
                                     Nanos now, std::int64_t cost) {
    SlidingWindow::State s = SlidingWindow::roll(p, s0, now);
    s.curr = std::min(p.limit, s.curr + cost);
    return s;
  }
};

// The TAT moves on by cost emission intervals, as if admitted: the key goes into debt, and
// its next request waits for it. The debt is capped at one full capacity (TAT at most
// now + 2 x tolerance), so a key that stops asking is admitted again within twice the refill.
template <>
struct DeniedCharge<Gcra> {
  static Gcra::State charge(const Gcra::Params& p, const Gcra::State& s, Nanos now,
                            std::int64_t cost) {
    const Nanos cap = now + 2 * p.tolerance;
    const Nanos tat = std::max(s.tat, now);
    if (tat >= cap) return {std::max(s.tat, cap)};
    const Nanos room = cap - tat;
    const Nanos add = cost > room / p.interval ? room : cost * p.interval;
    return {tat + add};
  }
};

// The tokens are taken though the request was refused: the bucket may go below zero, down to
// minus its burst (the same cap of one full capacity of debt).
template <>
struct DeniedCharge<TokenBucket> {
  static TokenBucket::State charge(const TokenBucket::Params& p, const TokenBucket::State& s,
                                   Nanos now, std::int64_t cost) {
    const double left = TokenBucket::advance(p, s, now) - static_cast<double>(cost);
    return {std::max(left, -static_cast<double>(p.burst)), std::max(s.last, now)};
  }
};

template <class A>
concept CountsDenials = requires(const typename A::Params& p, const typename A::State& s) {
  { DeniedCharge<A>::charge(p, s, Nanos{}, std::int64_t{}) } -> std::same_as<typename A::State>;
};

}  // namespace sluice::core
