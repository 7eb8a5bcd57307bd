// What every limiter algorithm of the core provides, as a concept, and the one generic helper
// that commits a decided step. Tables, policies and replay are written against this.
#pragma once

#include <concepts>
#include <cstdint>

#include "sluice/core/decision.hpp"

namespace sluice::core {

// An algorithm is a namespace-like struct of pure functions over (Params, State):
//   start(params, now)                         the state of a key at its first request
//   decide(params, state, now, cost, max_wait) the decision and the state to commit
//   retune(old_params, new_params, state, now) the state carried over a parameter change
//   idle(params, state, now)                   true when dropping the state changes nothing
template <class A>
concept Algorithm = requires(const typename A::Params& p, typename A::State& s, Nanos now,
                             std::int64_t cost) {
  { A::start(p, now) } -> std::same_as<typename A::State>;
  A::decide(p, s, now, cost, now).decision;
  { A::retune(p, p, s, now) } -> std::same_as<typename A::State>;
  { A::idle(p, s, now) } -> std::same_as<bool>;
};

// Applies a decided step to the stored state (algorithms with out-of-line state such as the
// sliding log define their own commit).
template <class A, class StepT>
void commit(const typename A::Params& p, typename A::State& s, const StepT& step) {
  if constexpr (requires { A::commit(p, s, step); }) {
    A::commit(p, s, step);
  } else {
    (void)p;
    s = step.next;
  }
}

}  // namespace sluice::core
