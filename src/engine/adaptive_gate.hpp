// One route's adaptive concurrency limit (config::AdaptiveConcurrency): the algorithm's state,
// the requests in flight and those waiting for a permit. Every event loop shares it under one
// mutex: a short critical section per admission and per finished request (per-loop shares
// would be cheaper and less exact; not needed at the rates measured in docs/overload.md).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <variant>
#include <vector>

#include "sluice/adaptive/any_limit.hpp"
#include "sluice/config/adaptive_concurrency.hpp"
#include "sluice/core/expected.hpp"

namespace sluice::engine::detail {

using adaptive::AnyLimit;

// The algorithm of `c`, its parameters from `c` over its defaults, started at `now`; the
// algorithm's own refusal of them as text.
core::Expected<AnyLimit> make_adaptive_limit(const config::AdaptiveConcurrency& c, core::Nanos now,
                                             std::uint64_t seed);

class AdaptiveGate {
 public:
  AdaptiveGate(const config::AdaptiveConcurrency& c, AnyLimit limit);

  // A permit: when it was handed out, and how many were in flight then (itself included).
  struct Permit {
    core::Nanos start = 0;
    std::int64_t in_flight = 0;
  };
  enum class Admit { kGranted, kQueued, kRefused };

  // One request of `tier`: granted (`permit` set), queued (`ticket` set: wait up to max_wait,
  // then claim), or refused (the limit is reached and max_wait is 0, or the queue is full).
  Admit acquire(int tier, core::Nanos now, Permit& permit, std::uint64_t& ticket);
  // `wake` runs (on whichever thread hands the permit over, outside the lock) once `ticket` is
  // granted; at once if it already was.
  void on_grant(std::uint64_t ticket, std::function<void()> wake);
  // After the wake or the wait's end: true (`permit` set) if the ticket was granted; else it
  // leaves the queue, refused (counted as shed unless `shed` is false: its client left).
  bool claim(std::uint64_t ticket, Permit& permit, bool shed = true);
  // A finished request: its permit back and its sample (`now`: when it ended) to the algorithm.
  void release(const Permit& p, core::Nanos now, adaptive::Outcome outcome);

  const config::AdaptiveConcurrency& config() const { return config_; }

  // For /metrics, any thread.
  struct Gauges {
    std::int64_t limit = 0;
    std::int64_t in_flight = 0;
    std::int64_t queued = 0;
    core::Nanos min_rtt = 0;  // 0: not measured yet
    std::array<std::uint64_t, config::kTopTier + 1> shed{};
  };
  Gauges gauges() const;

 private:
  struct Waiter {
    std::uint64_t ticket = 0;
    std::function<void()> wake;
  };
  struct Granted {
    Permit permit;
    bool woken = false;  // its wake was called at the hand-over
  };
  std::int64_t advance(core::Nanos now);  // fires the algorithm's due timers
  // Hands freed permits to waiters, highest tier first; their wakes go into `wakes`.
  void hand_over(core::Nanos now, std::vector<std::function<void()>>& wakes);
  void note_rtt(core::Nanos rtt, core::Nanos now);

  const config::AdaptiveConcurrency config_;
  mutable std::mutex mutex_;
  AnyLimit limit_;
  std::int64_t current_ = 1;
  std::int64_t in_flight_ = 0;
  std::array<std::deque<Waiter>, config::kTopTier + 1> queue_;  // by tier
  std::int64_t queued_ = 0;
  std::unordered_map<std::uint64_t, Granted> granted_;  // handed over, not yet claimed
  std::unordered_map<std::uint64_t, int> tier_of_;      // queued tickets
  std::uint64_t next_ticket_ = 1;
  // The lowest successful RTT of this window and the last (windows of kRttWindow).
  core::Nanos rtt_window_start_ = 0;
  core::Nanos min_rtt_now_ = 0;
  core::Nanos min_rtt_last_ = 0;
  std::array<std::atomic<std::uint64_t>, config::kTopTier + 1> shed_{};
};

}  // namespace sluice::engine::detail
