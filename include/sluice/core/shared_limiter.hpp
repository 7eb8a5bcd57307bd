// One limiter shared by many threads without a lock: the algorithm's one-word state lives in a
// std::atomic and each decision is a compare-and-swap loop around the pure decide().
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "sluice/core/algorithm.hpp"
#include "sluice/core/time.hpp"

namespace sluice::core {

// Policy apart from storage, as folly's TokenBucket does: the algorithm is the same pure code
// the tables and replay use. A CAS that loses a race re-decides on the winner's state, so no
// interleaving admits more than a single thread deciding in the same order would.
// Thread-safe. Params are fixed at construction (retune through a new SharedLimiter).
template <Algorithm A>
requires(sizeof(typename A::State) == 8 &&
         std::is_trivially_copyable_v<typename A::State>) class SharedLimiter {
 public:
  using Params = typename A::Params;
  using State = typename A::State;

  SharedLimiter(Params params, Nanos now) : params_(params), state_(A::start(params, now)) {}

  Decision decide(Nanos now, std::int64_t cost = 1, Nanos max_wait = 0) {
    State seen = state_.load(std::memory_order_acquire);
    for (;;) {
      const auto step = A::decide(params_, seen, at(now), cost, max_wait);
      if (!step.decision.allowed) return step.decision;
      if (state_.compare_exchange_weak(seen, step.next, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        return step.decision;
      }
      backoff();
    }
  }

  // Only yes or no: for algorithms that separate the verdict from the numbers (A::admit),
  // nothing but the next state is computed inside the CAS loop. A locked instruction waits for
  // every older instruction, so work done per attempt is latency, not throughput.
  bool allow(Nanos now, std::int64_t cost = 1, Nanos max_wait = 0) {
    if constexpr (requires(const Params& p, const State& s) {
                    A::admit(p, s, now, cost, max_wait);
                  }) {
      State seen = state_.load(std::memory_order_acquire);
      for (;;) {
        const auto a = A::admit(params_, seen, at(now), cost, max_wait);
        if (a.outcome != decltype(a.outcome)::kAllowed) return false;
        if (state_.compare_exchange_weak(seen, State{a.new_tat}, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
          return true;
        }
        backoff();
      }
    } else {
      return decide(now, cost, max_wait).allowed;
    }
  }

  const Params& params() const { return params_; }
  State state() const { return state_.load(std::memory_order_acquire); }

 private:
  // Time never runs back for this limiter (keyed_table.hpp's monotonic() says why). A thread
  // raises `latest_` before its CAS publishes a state, and reads it after loading a state, so
  // a state written at time t is never decided at a time before t.
  Nanos at(Nanos now) {
    Nanos seen = latest_.load(std::memory_order_acquire);
    while (now > seen) {
      if (latest_.compare_exchange_weak(seen, now, std::memory_order_acq_rel)) return now;
    }
    return seen;
  }

  // A lost race means another core owns the line right now: pausing before the retry lets the
  // winner finish instead of both cores bouncing the line (measured: contended 2-thread
  // decisions otherwise cost several times an uncontended one).
  static void backoff() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  const Params params_;
  std::atomic<State> state_;
  std::atomic<Nanos> latest_{std::numeric_limits<Nanos>::min()};
  static_assert(std::atomic<State>::is_always_lock_free);
};

}  // namespace sluice::core
