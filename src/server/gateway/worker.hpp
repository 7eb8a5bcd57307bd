// One gateway event loop: an io_context run by one thread, its acceptor (SO_REUSEPORT, so the
// kernel spreads connections over the loops), its upstream pool, counters and sessions.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <thread>
#include <unordered_set>

#include "access_log.hpp"
#include "common/loop_clock.hpp"
#include "gateway_metrics.hpp"
#include "loop_types.hpp"
#include "sluice/engine/loop.hpp"
#include "sluice/metrics/registry.hpp"
#include "upstream_pool.hpp"

namespace sluice::server::gateway {

class ClientSession;

class Worker {
 public:
  // Binds and listens on `address` (throws boost::system::system_error when it cannot).
  // `registry`: where the loop's Redis store is counted (may be null); `source`: the clock the
  // loop reads once a pass.
  Worker(engine::Engine& engine, AccessLog& log, const boost::asio::ip::tcp::endpoint& address,
         metrics::Registry* registry, const core::Clock& source);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  boost::asio::ip::tcp::endpoint local_endpoint() const { return local_; }
  const LoopStats& stats() const { return stats_; }

  void start();     // the loop's thread
  void shutdown();  // stop accepting, close idle connections (posted to the loop)
  void stop();      // stop the loop and join its thread

  // For the loop's sessions (loop thread only).
  engine::Engine& engine() { return engine_; }
  // The engine on this loop: decisions, and the Redis rules completed on this loop.
  engine::Loop& loop() { return *loop_; }
  const LoopClock& clock() const { return *clock_; }
  AccessLog& access_log() { return log_; }
  UpstreamPool& pool() { return pool_; }
  LoopStats& stats() { return stats_; }
  bool draining() const { return draining_; }
  void add(ClientSession* s) { sessions_.insert(s); }
  void remove(ClientSession* s) { sessions_.erase(s); }

 private:
  Awaitable<void> accept_loop();

  engine::Engine& engine_;
  AccessLog& log_;
  // Destroyed explicitly in ~Worker, before the members its pending handlers refer to.
  std::unique_ptr<boost::asio::io_context> io_;
  std::unique_ptr<Acceptor> acceptor_;
  boost::asio::ip::tcp::endpoint local_;
  LoopStats stats_;
  UpstreamPool pool_{stats_};
  std::unordered_set<ClientSession*> sessions_;
  std::unique_ptr<LoopClock> clock_;
  std::unique_ptr<engine::Loop> loop_;
  bool draining_ = false;
  std::thread thread_;
};

}  // namespace sluice::server::gateway
