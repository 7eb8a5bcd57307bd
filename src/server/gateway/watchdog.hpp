// A deadline on a connection's I/O, enforced by one steady_timer that is re-armed lazily.
// Moving the deadline later (each request on a keep-alive connection) is a store, not a timer
// operation: the timer fires at the old time, sees the new deadline and sleeps again. So
// timeouts cost no syscall on the request path, unlike a timer armed per read and write.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "loop_types.hpp"
#include "sluice/core/clock.hpp"

namespace sluice::server::gateway {

// A span of core::Nanos (a timeout, a delay) as the duration a timer takes.
inline std::chrono::nanoseconds ns(core::Nanos n) { return std::chrono::nanoseconds(n); }

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;

  // `on_expire` runs on the timer's executor when a deadline passes (it closes a socket).
  // `clock`: the loop's (steady, the epoch of the timer's steady_clock), cached per pass.
  Watchdog(const Executor& ex, const core::Clock& clock, std::function<void()> on_expire)
      : timer_(ex), clock_(clock), on_expire_(std::move(on_expire)) {}

  // The object whose lifetime the pending wait extends (the session owning this watchdog).
  void set_owner(std::weak_ptr<void> owner) { owner_ = std::move(owner); }

  // A deadline `d` from now: the loop's time, read once a pass, so a deadline comes at most a
  // pass early, for a clock read that costs nothing.
  void expires_after(Clock::duration d) {
    deadline_ = Clock::time_point(std::chrono::nanoseconds(clock_.now())) + d;
    if (!waiting_ || deadline_ < timer_.expiry()) arm(owner_.lock());
  }

  // No deadline until the next expires_after(); a pending wait lapses without firing.
  void disarm() { deadline_ = Clock::time_point::max(); }

  // Cancels the pending wait, so that it releases its owner now.
  void stop() {
    deadline_ = Clock::time_point::max();
    timer_.cancel();
  }

 private:
  void arm(std::shared_ptr<void> owner) {
    if (!owner) return;
    timer_.expires_at(deadline_);  // cancels a pending wait; its handler sees a stale generation
    waiting_ = true;
    timer_.async_wait(
        [this, owner = std::move(owner), g = ++generation_](const boost::system::error_code& ec) {
          if (g != generation_) return;
          waiting_ = false;
          if (ec || deadline_ == Clock::time_point::max()) return;
          if (Clock::time_point(std::chrono::nanoseconds(clock_.now())) < deadline_) {
            arm(owner);
            return;
          }
          deadline_ = Clock::time_point::max();
          on_expire_();
        });
  }

  Timer timer_;
  const core::Clock& clock_;
  std::function<void()> on_expire_;
  std::weak_ptr<void> owner_;
  Clock::time_point deadline_ = Clock::time_point::max();
  unsigned generation_ = 0;
  bool waiting_ = false;
};

}  // namespace sluice::server::gateway
