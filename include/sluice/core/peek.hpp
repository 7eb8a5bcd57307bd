// A key's state as a client would be told it, without charging it: what GET
// /v1/rules/{name}/keys/{key}, SLUICE.PEEK and CL.THROTTLE's quantity 0 answer.
#pragma once

#include <cstdint>

#include "sluice/core/algorithm.hpp"
#include "sluice/core/decision.hpp"

namespace sluice::core {

// Every algorithm's decide() at cost 0 admits nothing and so charges nothing: its `remaining`
// is what is left now and its `reset_after` the time to a full quota (redis-cell's own peek is
// CL.THROTTLE with quantity 0). Whether a request of cost 1 would pass at once, and if not
// when, is decide() at cost 1 in reject mode; neither step is committed.
//   allowed      a request of cost 1 would pass now (after `delay`, for the queueing kinds)
//   remaining    what is left now (the algorithm's meaning; -1 where it has none)
//   retry_after  0 when allowed; else the wait before a request of cost 1 passes (kNever:
//                never, the limit is below one permit)
//   reset_after  the time until the key is back to its initial state
template <Algorithm A>
Decision peek(const typename A::Params& p, const typename A::State& s, Nanos now) {
  Decision d = A::decide(p, s, now, 0, 0).decision;
  const Decision one = A::decide(p, s, now, 1, 0).decision;
  d.allowed = one.allowed;
  d.delay = one.allowed ? one.delay : 0;
  d.retry_after = one.allowed ? 0 : one.retry_after;
  d.overflow = d.overflow || one.overflow;
  return d;
}

}  // namespace sluice::core
