// One of the adaptive algorithms with its parameters and state, as a value: what a route's
// gate holds and what `sluice simulate`'s collapse model runs, so both drive them the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <variant>

#include "sluice/adaptive/aimd.hpp"
#include "sluice/adaptive/envoy_gradient.hpp"
#include "sluice/adaptive/gradient2.hpp"
#include "sluice/adaptive/vegas.hpp"

namespace sluice::adaptive {

template <class L>
struct Held {
  using Limit = L;
  typename L::Params params;
  typename L::State state;
};
using AnyLimit = std::variant<Held<EnvoyGradient>, Held<Vegas>, Held<Gradient2>, Held<Aimd>>;

// `p` checked by the algorithm, and its state started at `now`; or the algorithm's refusal.
template <class L>
core::Expected<AnyLimit> start_limit(const typename L::Params& p, Nanos now, std::uint64_t seed) {
  auto valid = L::validate(p);
  if (!valid) return core::make_error(valid.error());
  return AnyLimit(Held<L>{*valid, L::start(*valid, now, seed)});
}

// The current limit, never below 1: a limit of 0 would admit nothing, and so never learn that
// it could admit more.
inline std::int64_t current_limit(const AnyLimit& any) {
  return std::visit(
      [](const auto& h) {
        using L = typename std::decay_t<decltype(h)>::Limit;
        return std::max<std::int64_t>(1, L::limit(h.state));
      },
      any);
}

// Fires what is due at or before `now` (Envoy's timers); the limit after.
inline std::int64_t advance_limit(AnyLimit& any, Nanos now) {
  std::visit(
      [&](auto& h) {
        using L = typename std::decay_t<decltype(h)>::Limit;
        if (L::next_event(h.state) <= now) L::advance(h.params, h.state, now);
      },
      any);
  return current_limit(any);
}

inline void learn(AnyLimit& any, const Sample& sample) {
  std::visit(
      [&](auto& h) {
        using L = typename std::decay_t<decltype(h)>::Limit;
        L::update(h.params, h.state, sample);
      },
      any);
}

inline Nanos next_event(const AnyLimit& any) {
  return std::visit(
      [](const auto& h) {
        using L = typename std::decay_t<decltype(h)>::Limit;
        return L::next_event(h.state);
      },
      any);
}

}  // namespace sluice::adaptive
