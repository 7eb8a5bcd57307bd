// A route's breaker in the engine: core::Breaker's state under a lock (every event loop asks
// it), its counters, and where a compiled snapshot finds it; kept across reloads that leave it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "sluice/config/breaker_config.hpp"
#include "sluice/core/breaker.hpp"
#include "sluice/engine/breaker_call.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::engine {
struct Snapshot;
}

namespace sluice::engine::detail {

// Counted for the route, kept across reloads whatever its breaker becomes.
struct BreakerCounters {
  static constexpr std::size_t kModes = 3;
  std::array<std::array<std::atomic<std::uint64_t>, kModes>, kModes> transitions{};  // [from][to]
  std::atomic<std::uint64_t> static_answers{0};
  std::atomic<std::uint64_t> stale_answers{0};
};

class RouteBreaker {
 public:
  RouteBreaker(const config::BreakerConfig& config, std::shared_ptr<BreakerCounters> counters);

  const config::BreakerConfig& config() const { return config_; }
  // The status fallback's headers as lines ("Name: value\r\n").
  std::string_view static_headers() const { return static_headers_; }
  BreakerCounters& counters() { return *counters_; }
  const std::shared_ptr<BreakerCounters>& shared_counters() const { return counters_; }
  core::Breaker::Mode mode() const { return mode_.load(std::memory_order_relaxed); }

  core::Breaker::Ticket admit(core::Nanos now, BreakerChange& change);
  BreakerChange record(core::Breaker::Ticket t, core::Breaker::Result r, core::Nanos duration,
                       core::Nanos now);
  // Whether the route's `errors:` count this end as a failure.
  bool failed(const ExchangeEnd& end) const;

 private:
  // After a step under the lock: the change it made, counted.
  BreakerChange commit(const core::Breaker::State& next);

  config::BreakerConfig config_;
  std::string static_headers_;
  std::shared_ptr<BreakerCounters> counters_;
  std::mutex mu_;
  core::Breaker::State state_ = core::Breaker::start();
  std::atomic<core::Breaker::Mode> mode_{core::Breaker::Mode::kClosed};
};

// Gives each route of `snap` that configures a breaker its RouteBreaker: the old snapshot's
// when the breaker's config is unchanged (its state goes on), else a new closed one (with the
// route's counters); and the stale cache, kept and resized, when a route answers stale.
void attach_breakers(Snapshot& snap, const Snapshot* old);

// The breaker series of docs/metrics.md: state, transitions, fallback answers, the cache.
void breaker_metrics(metrics::Sink& sink, const Snapshot& snap);

}  // namespace sluice::engine::detail
