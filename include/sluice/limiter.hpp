// sluice::Limiter: one limit shared by every thread of a program, what Guava's RateLimiter
// and golang.org/x/time/rate's Limiter are (docs/library.md sets the calls side by side).
// Installed with libsluice; includes only the standard library (C++17 or later).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "sluice/decision.hpp"
#include "sluice/limit.hpp"

namespace sluice {

// Thread-safe: share one Limiter by reference (or a shared_ptr) among threads. GCRA and the
// queue decide lock-free (a compare-and-swap on their one-word state); the other algorithms
// hold a mutex for the few nanoseconds of a decision. Decisions are the same pure code the
// daemon and `sluice replay` run, so they match the peer each algorithm reproduces.
//
// Every call takes `now` last, defaulting to Clock::now(). The limiter never reads the clock
// otherwise, so tests and simulations pass virtual times and get exact, repeatable answers.
//
// Errors: LimitError from the constructors (a bad spec, or an algorithm a single limiter
// cannot be: `concurrency` counts leases, which need a release). std::invalid_argument for a
// cost below 1 (a caller bug). Deciding never throws otherwise, and allocates only for
// sliding-log, which records each admitted request.
//
// Not copyable (a copy would be a second limiter with a budget of its own); movable. A
// moved-from Limiter may only be destroyed or assigned to.
class Limiter {
 public:
  // The state starts at construction (Guava's RateLimiter.create does the same: SmoothBursty
  // saves no permits before it exists; a token bucket starts full).
  explicit Limiter(const Limit& limit, Time start = Clock::now());
  explicit Limiter(std::string_view spec, Time start = Clock::now());
  Limiter(Limiter&&) noexcept;
  Limiter& operator=(Limiter&&) noexcept;
  ~Limiter();

  // One request, now or never: x/time/rate Allow(), Guava tryAcquire().
  bool allow(Time now = Clock::now()) { return try_acquire(1, now); }

  // `cost` permits now or never: x/time/rate AllowN(now, cost), Guava tryAcquire(cost).
  bool try_acquire(std::int64_t cost, Time now = Clock::now());

  // `cost` permits if they can be had within `max_wait`: the wait, to be slept by the caller
  // before proceeding (0 = at once), or nullopt (nothing taken). With the default unbounded
  // max_wait this is x/time/rate ReserveN(now, cost).Delay() (nullopt where its OK() is
  // false); with a bound it is Guava tryAcquire(cost, max_wait) without the sleep. Window
  // algorithms admit now or never; leaky-bucket and queue delay by their own parameters.
  std::optional<Duration> reserve(std::int64_t cost = 1, Duration max_wait = kForever,
                                  Time now = Clock::now());

  // Blocks until `cost` permits are had, then returns the time slept: Guava acquire(cost),
  // x/time/rate Wait. Reads the steady clock (no `now`: it sleeps in real time). Throws
  // LimitError when the cost can never be admitted (above the capacity), as Wait errors.
  Duration acquire(std::int64_t cost = 1);

  // The full answer (wait, remaining, retry-after, reset) for callers that tell clients, e.g.
  // in RateLimit or Retry-After headers. max_wait 0 = now or never.
  Decision decide(std::int64_t cost = 1, Duration max_wait = Duration::zero(),
                  Time now = Clock::now());

  const Limit& limit() const;

  class Impl;  // src/api/limiter.cpp

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
