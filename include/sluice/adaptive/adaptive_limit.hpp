// The shape every adaptive concurrency limit has (a C++20 concept), so that the gateway can
// hold any of them the same way: a value State, a Params struct with the reference's defaults,
// and pure functions of them; nothing reads a clock, nothing locks, nothing allocates.
#pragma once

#include <concepts>
#include <cstdint>

#include "sluice/adaptive/sample.hpp"
#include "sluice/core/expected.hpp"

namespace sluice::adaptive {

// next_event() of a limit that has no timers: nothing is due, ever.
inline constexpr Nanos kNoEvent = core::kForever;

// start(params, now, seed)  -> State    the state before the first sample
// update(params, state&, s) -> limit    learn from one finished request, return the new limit
// advance(params, state&, now) -> limit fire what is due at or before now (Envoy's timers)
// next_event(state)         -> Nanos    when advance next has something to do (kNoEvent: never)
// limit(state)              -> limit    the current limit: admit while in_flight < limit
// validate(params)          -> Params   or the reference's own refusal of them, as text
template <class L>
concept AdaptiveLimit = requires(const typename L::Params& p, typename L::State& s,
                                 const typename L::State& cs, const Sample& x, Nanos now,
                                 std::uint64_t seed) {
  { L::start(p, now, seed) } -> std::same_as<typename L::State>;
  { L::update(p, s, x) } -> std::same_as<std::int64_t>;
  { L::advance(p, s, now) } -> std::same_as<std::int64_t>;
  { L::next_event(cs) } -> std::same_as<Nanos>;
  { L::limit(cs) } -> std::same_as<std::int64_t>;
  { L::validate(p) } -> std::same_as<core::Expected<typename L::Params>>;
};

}  // namespace sluice::adaptive
