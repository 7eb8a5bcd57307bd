// What an adaptive concurrency limit learns from: one finished request (when it started, how
// long it took, how many were in flight when it was admitted, how it ended).
#pragma once

#include <cstdint>

#include "sluice/core/time.hpp"

namespace sluice::adaptive {

using core::Nanos;

// How a request ended, in Netflix concurrency-limits' terms (Limiter.Listener):
// kSuccess  onSuccess: the upstream answered; its RTT is a latency sample.
// kDropped  onDropped: the upstream timed out or refused (overload); a loss signal, and for
//           Envoy's controller still a latency sample (Envoy records every response it encodes).
// kIgnored  onIgnore: the request says nothing about the upstream (the client went away, a
//           4xx of the client's making); no algorithm learns from it.
enum class Outcome : std::uint8_t { kSuccess, kDropped, kIgnored };

struct Sample {
  Nanos start = 0;  // when the request was admitted (Netflix startTime, Envoy rq_send_time)
  Nanos rtt = 0;    // how long it took; start + rtt is when it finished
  // Requests in flight when this one was admitted, itself included (Netflix's
  // inFlight.incrementAndGet() at acquire). Envoy's controller does not use it.
  std::int64_t in_flight = 0;
  Outcome outcome = Outcome::kSuccess;

  Nanos end() const { return start + rtt; }
};

// Every limit answers "admit one more?" the same way: Netflix SimpleLimiter's semaphore and
// Envoy's forwardingDecision() both admit while in_flight < limit.
constexpr bool admits(std::int64_t limit, std::int64_t in_flight) { return in_flight < limit; }

}  // namespace sluice::adaptive
