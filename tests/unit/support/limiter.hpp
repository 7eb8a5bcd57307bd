// Test support: one key's limiter driven by hand. A TestLimiter creates its state at the first
// request and commits a step exactly when the tables do (allowed, or commit_on_denial), so a
// test reads like a client's view of a limit.
#pragma once

#include <cstdint>
#include <utility>

#include "sluice/core/algorithm.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/core/time.hpp"
#include "support/units.hpp"

namespace sluice::test {

template <core::Algorithm A>
class TestLimiter {
 public:
  using Params = typename A::Params;
  using State = typename A::State;

  // `max_wait` is the caller's patience for every request (0: reject mode).
  explicit TestLimiter(Params params, core::Nanos max_wait = 0)
      : params_(params), max_wait_(max_wait) {}

  core::Decision at(core::Nanos now, std::int64_t cost = 1) { return at(now, cost, max_wait_); }

  core::Decision at(core::Nanos now, std::int64_t cost, core::Nanos max_wait) {
    State current = started_ ? state_ : A::start(params_, now);
    const auto step = A::decide(params_, current, now, cost, max_wait);
    if (step.decision.allowed || step.commit_on_denial) {
      core::commit<A>(params_, current, step);
      state_ = std::move(current);
      started_ = true;
    }
    return step.decision;
  }

  // How many of `n` requests of `cost` at one instant are allowed.
  int allowed_of(int n, core::Nanos now, std::int64_t cost = 1) {
    int allowed = 0;
    for (int i = 0; i < n; ++i) allowed += at(now, cost).allowed ? 1 : 0;
    return allowed;
  }

  // A live parameter change, as KeyedLimit::retune applies it.
  void retune(Params to, core::Nanos now) {
    if (started_) state_ = A::retune(params_, to, state_, now);
    params_ = to;
  }

  bool idle(core::Nanos now) const { return !started_ || A::idle(params_, state_, now); }
  const State& state() const { return state_; }
  const Params& params() const { return params_; }

 private:
  Params params_;
  core::Nanos max_wait_;
  // Not std::optional: g++ 12 -O3 warns maybe-uninitialized through it.
  State state_{};
  bool started_ = false;  // false until the first committed request, as in the tables
};

}  // namespace sluice::test
