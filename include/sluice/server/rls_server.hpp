// The Envoy rate limit service (docs/envoy-rls.md): gRPC
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit, wire compatible with Envoy's
// global rate limit filters, answered by the engine from the config's RLS domains (the `rls:`
// section and envoyproxy/ratelimit files), kept here or in Redis, reloaded with the config.
//
// Threads: connections are accepted, and their bytes copied to and from gRPC, on the stream
// gate's thread (src/server/rls/stream_gate.hpp); gRPC's callback API receives each call on
// gRPC's own threads; the call is decided on the service's own event loop (its engine::Loop,
// with its Redis store when the domains are kept in Redis) and finished from there.
#pragma once

#include <memory>
#include <string>

#include "sluice/core/clock.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::server {

class RlsServer {
 public:
  // `listen_addr`: "127.0.0.1:8081", "[::1]:8081", "localhost:8081", ":8081" (all addresses);
  // port 0 picks a free one. `engine` (and `registry`, when given) must outlive the server.
  // Nothing is bound until start().
  // `clocks`: wall for the windows (envoyproxy/ratelimit's start at Unix times), steady for
  // the stream gate's counts.
  RlsServer(std::string listen_addr, engine::Engine& engine, metrics::Registry* registry,
            core::Clocks clocks);
  ~RlsServer();  // stop()
  RlsServer(const RlsServer&) = delete;
  RlsServer& operator=(const RlsServer&) = delete;

  // Binds and starts serving. Throws std::runtime_error naming the address when it cannot.
  void start();

  // Stops accepting, lets calls in flight finish (at most a second), stops. Idempotent.
  void stop();

  // The port bound (the chosen one when the address asked for port 0). After start().
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::server
