// The circuit breaker in front of Redis: after consecutive failures it opens, so decisions
// follow the failure policy at once instead of each waiting out a timeout on a dead Redis.
#pragma once

#include <cstdint>

#include "sluice/core/time.hpp"

namespace sluice::backend::redis {

// Closed: calls go to Redis. Open: none do, until `open_for` has passed. Half-open: one probe
// goes; its success closes the breaker, its failure opens it again. Pure: time is passed in.
class Breaker {
 public:
  enum class State { kClosed, kOpen, kHalfOpen };

  struct Options {
    int failures_to_open = 3;                           // consecutive failed calls
    core::Nanos open_for = 200 * core::kNanosPerMilli;  // between probes of a dead Redis
  };

  Breaker() = default;
  explicit Breaker(Options o) : options_(o) {}

  // May a call go to Redis now? In half-open, only the first caller gets true (the probe).
  bool allow(core::Nanos now) {
    if (state_ == State::kOpen && now - opened_at_ >= options_.open_for) {
      state_ = State::kHalfOpen;
      probing_ = false;
    }
    if (state_ == State::kClosed) return true;
    if (state_ == State::kHalfOpen && !probing_) {
      probing_ = true;
      return true;
    }
    return false;
  }

  void success() {
    state_ = State::kClosed;
    failures_ = 0;
    probing_ = false;
  }

  // A connection that is down opens at once: waiting for more failures would only add them.
  void failure(core::Nanos now, bool connection_down) {
    ++failures_;
    if (state_ == State::kHalfOpen || connection_down || failures_ >= options_.failures_to_open) {
      // An outage counts once: a failed probe keeps the breaker open rather than opening it.
      if (state_ == State::kClosed) ++opens_;
      state_ = State::kOpen;
      opened_at_ = now;
      probing_ = false;
    }
  }

  State state() const { return state_; }
  std::uint64_t opens() const { return opens_; }

 private:
  Options options_{};
  State state_ = State::kClosed;
  int failures_ = 0;
  bool probing_ = false;
  core::Nanos opened_at_ = 0;
  std::uint64_t opens_ = 0;
};

}  // namespace sluice::backend::redis
