// The HTTP gateway (issue 4): a reverse proxy that asks the rules engine about every request
// and forwards, delays, rejects or answers it. One event loop per worker thread, each with its
// own SO_REUSEPORT acceptor, upstream keep-alive pools and counters, so loops share nothing but
// the engine (thread-safe) and the access log.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::server {

struct GatewayOptions {
  config::Endpoint listen;  // port 0: any free port (see local_endpoint())
  int workers = 0;          // event loops; 0: one per hardware thread
  // Where the gateway's and its loops' Redis counters are registered (may be null).
  metrics::Registry* registry = nullptr;
  core::Clocks clocks;  // both required: each loop's time, and the access log's
};

class Gateway {
 public:
  // Binds the listeners. Throws std::runtime_error naming the address when it cannot.
  // `engine` must outlive the gateway. Timeouts, upstreams and the access log are read from
  // the engine's snapshot per request, so a reload changes them; the listener stays.
  Gateway(engine::Engine& engine, GatewayOptions options);
  ~Gateway();  // stop()
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Starts the worker threads.
  void start();

  // The address bound (the chosen port when the port asked for was 0).
  config::Endpoint local_endpoint() const;

  // Graceful shutdown, first step: stop accepting and close keep-alive connections waiting
  // for a request; requests in flight are answered, then their connections close.
  // Thread-safe, idempotent.
  void shutdown();

  // Client connections still open (0 once a shutdown() has drained). Thread-safe.
  std::size_t open_connections() const;

  // Stops the loops and joins their threads; connections still open are dropped.
  // Idempotent. Not from a worker thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::server
