// How the gateway reads a request body (a route's request_buffering, http.body_buffer,
// http.max_buffered_body, http.min_body_rate, timeouts.body): how much of it to hold before an
// upstream connection is taken, and the deadline a trickling body must keep. Pure arithmetic, so
// the policy is tested without sockets; the session does the reading (client_session.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/time.hpp"

namespace sluice::server::gateway {

// How much of a body to read before an upstream connection is taken. Buffered (the route's
// request_buffering on, http.max_buffered_body over 0): until it ends or `total` bytes are in
// hand, the first `memory` of them in memory and the rest in a temporary file, so that a slow
// client holds no upstream connection while it sends; a longer body streams after them.
// Streamed: one read of at most `piece` bytes, which goes out with the head.
struct BodyPlan {
  std::size_t memory = 0;   // held in memory, at most
  std::uint64_t total = 0;  // read before forwarding, at most
  bool buffered = false;    // false: one read, then stream
};
BodyPlan plan_body(bool request_buffering, const config::BodyLimits& limits, std::size_t piece);

// The pace a body must keep, as nginx's client_body_timeout between reads plus a minimum
// average rate, so that a trickle of a byte now and then cannot hold a connection for ever:
// the next bytes are due `gap` after the last ones, and by t into the body at least
// (t - gap) * min_rate bytes must have arrived (min_rate 0: no minimum).
class BodyPace {
 public:
  BodyPace() = default;
  BodyPace(core::Nanos gap, std::size_t min_rate, core::Nanos now)
      : gap_(gap), min_rate_(min_rate), start_(now), last_(now), started_(true) {}

  bool started() const { return started_; }
  std::uint64_t received() const { return received_; }

  // `bytes` more arrived at `now`.
  void got(std::uint64_t bytes, core::Nanos now) {
    received_ += bytes;
    if (bytes > 0) last_ = now;
  }

  // When the body times out unless more of it arrives.
  core::Nanos deadline() const;

 private:
  core::Nanos gap_ = 0;
  std::size_t min_rate_ = 0;
  core::Nanos start_ = 0;
  core::Nanos last_ = 0;
  std::uint64_t received_ = 0;
  bool started_ = false;
};

}  // namespace sluice::server::gateway
