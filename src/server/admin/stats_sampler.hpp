// Feeds the dashboard's StatsHistory: once a second it reads the engine's decision counters
// (sluice_rule_requests_total, through the metrics registry) and records what moved.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <mutex>
#include <vector>

#include "sluice/core/clock.hpp"
#include "sluice/metrics/registry.hpp"
#include "stats_history.hpp"

namespace sluice::server {

// The totals of each rule (every frontend and route together) and of each gateway route (its
// rules' decisions together) in one collection of `registry`.
std::vector<SeriesTotal> decision_totals(const metrics::Registry& registry);

class StatsSampler : public std::enable_shared_from_this<StatsSampler> {
 public:
  // `wall` dates each sample (the series are in unix seconds); both must outlive the sampler.
  // `io` is the admin loop's. Sampling starts at the dashboard's first call (start_once), not
  // with the listener: one collection of a config of 100,000 rules takes long enough to stall
  // /healthz under ASan (admin/test_config_size), and a server nobody watches pays nothing.
  StatsSampler(boost::asio::any_io_executor io, const metrics::Registry& registry,
               const core::Clock& wall);
  void start();       // samples now, then every second on `io`
  void start_once();  // start() the first time it is called (on `io`); nothing after
  void stop();        // thread-safe

  StatsHistory::Window since(std::int64_t since) const;
  std::size_t memory_bytes() const;

 private:
  void sample();
  void arm();

  const metrics::Registry& registry_;
  const core::Clock& wall_;
  boost::asio::steady_timer timer_;
  bool started_ = false;  // on io
  mutable std::mutex mutex_;
  StatsHistory history_;  // under mutex_
};

}  // namespace sluice::server
