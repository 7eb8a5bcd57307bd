// The answer of every limiter: may this request go now, later, or not at all, and the numbers
// a frontend needs to tell the client (remaining, retry-after, reset).
#pragma once

#include <cstdint>

#include "sluice/core/time.hpp"

namespace sluice::core {

struct Decision {
  bool allowed = false;
  // How long an allowed request waits before it proceeds; 0 when denied.
  Nanos delay = 0;
  // Whole permits left after this decision; -1 where the algorithm has no such notion.
  std::int64_t remaining = -1;
  // For a denied request, the earliest wait after which the same request would be allowed;
  // kNever when it never can be (cost above capacity); 0 when allowed.
  Nanos retry_after = 0;
  // Time until the limiter is back to its initial (idle) state.
  Nanos reset_after = 0;
  // The limit a client sees (the capacity, in permits); -1 where not meaningful.
  std::int64_t limit = -1;
  // The request's arithmetic would leave 64-bit time (a time near the end of the range, or a
  // cost whose wait is centuries): nothing was charged, and callers report it as bad input.
  bool overflow = false;
};

// The result of deciding on a small state: the decision and the state to store if the request
// goes through. The caller commits `next` when it admits the request (with several limits,
// only when all admit it). `commit_on_denial` marks the rare reference that changes its state
// even when it says no (x/time/rate's reserve-then-cancel advances its clock).
template <class State>
struct Step {
  Decision decision;
  State next;
  bool commit_on_denial = false;
};

inline Decision denied(Nanos retry_after, std::int64_t remaining, Nanos reset_after,
                       std::int64_t limit) {
  return Decision{false, 0, remaining, retry_after, reset_after, limit, false};
}

inline Decision overflowed() {
  Decision d = denied(kNever, -1, 0, -1);
  d.overflow = true;
  return d;
}

}  // namespace sluice::core
