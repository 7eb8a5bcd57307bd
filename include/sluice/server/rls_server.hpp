// The Envoy rate limit service (docs/envoy-rls.md): gRPC
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit, wire compatible with Envoy's
// global rate limit filters, answered from an envoyproxy/ratelimit-style RlsConfig whose limits
// are Sluice limits (fixed windows by default, as envoyproxy/ratelimit counts).
//
// Threads: gRPC's callback API runs each call on gRPC's own thread pool; a call decides at
// once (no I/O, no waiting) on tables shared by every thread.
#pragma once

#include <memory>
#include <string>

#include "sluice/metrics/registry.hpp"
#include "sluice/server/rls_config.hpp"

namespace sluice::server {

class RlsServer {
 public:
  // `listen_addr`: "127.0.0.1:8081", "[::1]:8081", "localhost:8081", ":8081" (all addresses);
  // port 0 picks a free one. Builds every limit's table now: throws std::invalid_argument
  // naming the domain when one cannot be made. Nothing is bound until start().
  RlsServer(std::string listen_addr, RlsConfig config);
  ~RlsServer();  // stop()
  RlsServer(const RlsServer&) = delete;
  RlsServer& operator=(const RlsServer&) = delete;

  // Binds and starts serving. Throws std::runtime_error naming the address when it cannot.
  void start();

  // Stops accepting, lets calls in flight finish (at most a second), stops. Idempotent.
  void stop();

  // The port bound (the chosen one when the address asked for port 0). After start().
  int port() const;

  // Prometheus text: calls by outcome, descriptors by status code.
  void collect_metrics(metrics::Sink& sink) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::server
