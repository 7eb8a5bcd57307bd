// Concurrency limit (nginx limit_conn, Sentinel's thread-count grade): at most `limit` leases
// in flight; acquiring takes `cost` of them, releasing gives them back. Not time-based.
#pragma once

#include <cstdint>
#include <type_traits>

#include "sluice/core/decision.hpp"

namespace sluice::core {

struct Concurrency {
  struct Params {
    std::int64_t limit = 0;
  };
  struct State {
    std::int64_t in_flight = 0;
  };
  static_assert(sizeof(State) == 8 && std::is_trivially_copyable_v<State>);

  static State start(const Params&, Nanos) { return State{0}; }

  // Allowed iff in_flight + cost <= limit. There is no retry time: a lease frees up when a
  // holder finishes, which no clock can tell, so retry_after is 0 ("unknown") on denial.
  static Step<State> acquire(const Params& p, const State& s, std::int64_t cost) {
    if (cost <= p.limit - s.in_flight) {
      const std::int64_t after = s.in_flight + cost;
      return {Decision{true, 0, p.limit - after, 0, 0, p.limit}, State{after}};
    }
    return {denied(cost > p.limit ? kNever : 0, p.limit - s.in_flight, 0, p.limit), s};
  }

  // Releasing more than is held is a caller bug; clamp rather than go negative.
  static State release(const State& s, std::int64_t cost) {
    return State{s.in_flight > cost ? s.in_flight - cost : 0};
  }

  // The replay/keyed-table signature: a decision is an acquire that is never released.
  static Step<State> decide(const Params& p, const State& s, Nanos, std::int64_t cost, Nanos) {
    return acquire(p, s, cost);
  }

  static State retune(const Params&, const Params&, const State& s, Nanos) { return s; }
  static bool idle(const Params&, const State& s, Nanos) { return s.in_flight == 0; }
  // Leases are out: a table must keep this state whatever its budget pressure.
  static bool pinned(const State& s) { return s.in_flight > 0; }
};

}  // namespace sluice::core
