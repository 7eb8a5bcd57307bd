// Settling a cost known only after the response (`cost_from`, `reserve`, the check API's
// report): the state after charging the stated cost less what was reserved at admission.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sluice/core/denied_charge.hpp"

namespace sluice::core {

// A hostile or broken upstream must not overflow a counter or a TAT: a stated cost above this
// is charged as this. (The debt itself is capped further, at one capacity, by DeniedCharge.)
// It also bounds what a rule may reserve and a report may state (config, check API, RESP).
inline constexpr std::int64_t kMaxStatedCost = 1'000'000;

// The cost an upstream stated, as a non-negative decimal integer; nullopt when the value is
// missing or malformed (the caller then charges the reserve, and counts it as a bad header).
inline std::optional<std::int64_t> parse_stated_cost(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  if (v.empty() || v.size() > 18) return std::nullopt;  // 18 digits cannot overflow int64
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || n < 0) return std::nullopt;
  return std::min(n, kMaxStatedCost);
}

// What settling charges: positive, more is owed (it may put the key into debt); negative, a
// refund of part of the reserve.
inline std::int64_t settle_delta(std::int64_t reserved, std::int64_t stated) {
  return std::min(stated, kMaxStatedCost) - reserved;
}

// Per algorithm: a positive delta is charged as a counted denial is (it may go into debt, up
// to one capacity); a negative delta gives back what the reserve took, never beyond a full
// quota, and only within the window it was taken in (a window since ended has nothing left to
// give back). Only the algorithms DeniedCharge covers settle; check-config refuses the others.
template <class A>
struct Settle;

template <>
struct Settle<FixedWindow> {
  static FixedWindow::State apply(const FixedWindow::Params& p, const FixedWindow::State& s,
                                  Nanos now, std::int64_t delta) {
    if (delta >= 0) return DeniedCharge<FixedWindow>::charge(p, s, now, delta);
    const auto w = FixedWindow::window_at(p, now);
    if (w.index != s.index) return s;
    return {s.index, std::max<std::int64_t>(0, s.count + delta)};
  }
};

template <>
struct Settle<SlidingWindow> {
  static SlidingWindow::State apply(const SlidingWindow::Params& p, const SlidingWindow::State& s0,
                                    Nanos now, std::int64_t delta) {
    if (delta >= 0) return DeniedCharge<SlidingWindow>::charge(p, s0, now, delta);
    SlidingWindow::State s = SlidingWindow::roll(p, s0, now);
    if (s.index != s0.index) return s;
    s.curr = std::max<std::int64_t>(0, s.curr + delta);
    return s;
  }
};

// The refund moves the TAT back by its intervals, never before now (a full quota).
template <>
struct Settle<Gcra> {
  static Gcra::State apply(const Gcra::Params& p, const Gcra::State& s, Nanos now,
                           std::int64_t delta) {
    if (delta >= 0) return DeniedCharge<Gcra>::charge(p, s, now, delta);
    const Nanos back = -delta > (s.tat - now) / p.interval ? s.tat - now : -delta * p.interval;
    return {s.tat <= now ? s.tat : s.tat - back};
  }
};

// The refund puts the tokens back, up to a full bucket.
template <>
struct Settle<TokenBucket> {
  static TokenBucket::State apply(const TokenBucket::Params& p, const TokenBucket::State& s,
                                  Nanos now, std::int64_t delta) {
    if (delta >= 0) return DeniedCharge<TokenBucket>::charge(p, s, now, delta);
    const double back = TokenBucket::advance(p, s, now) - static_cast<double>(delta);
    return {std::min(back, static_cast<double>(p.burst)), std::max(s.last, now)};
  }
};

}  // namespace sluice::core
