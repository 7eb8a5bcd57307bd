// The gateway's own metrics: open connections, responses by status class, and per upstream a
// latency histogram and a failure count. Each worker loop writes its own LoopStats (single
// writer, relaxed stores, no shared cache line between loops); /metrics sums them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/time.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::server::gateway {

// Written by one thread, read by any: a plain load and store, never a locked read-modify-write.
class Counter {
 public:
  void add(std::int64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) + static_cast<std::uint64_t>(n),
             std::memory_order_relaxed);
  }
  std::uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

// Upper bounds of sluice_upstream_latency_seconds, in seconds (Prometheus' default buckets
// widened to the upstream timeout's range).
inline constexpr std::array<double, 14> kLatencyBounds = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

struct UpstreamStats {
  std::array<Counter, kLatencyBounds.size() + 1> buckets;  // the last is +Inf
  Counter sum_ns;
  Counter count;
  Counter failures;  // connect errors and timeouts, broken or missing responses

  void observe(core::Nanos latency);
};

class LoopStats {
 public:
  Counter open_connections;          // added to and subtracted from (wraps back through zero)
  std::array<Counter, 6> responses;  // by status / 100; [0] anything outside 1xx..5xx
  Counter client_aborts;             // clients gone while their request waited on an upstream

  void response(int status) { responses[status >= 100 && status < 600 ? status / 100 : 0].add(); }

  // The loop's stats for an upstream, created at its first use. Loop thread only.
  UpstreamStats& upstream(std::string_view name);

  // Any thread.
  template <class F>
  void for_each_upstream(F&& f) const {
    std::lock_guard lock(mu_);
    for (const auto& [name, stats] : upstreams_) f(name, *stats);
  }

 private:
  mutable std::mutex mu_;  // guards inserts against readers; the loop's finds need no lock
  std::map<std::string, std::unique_ptr<UpstreamStats>, std::less<>> upstreams_;
};

// One loop's samples (the registry sums the loops): sluice_gateway_open_connections,
// sluice_gateway_responses_total{code="2xx"}, sluice_upstream_latency_seconds{upstream=...},
// sluice_upstream_failures_total{upstream=...}, sluice_gateway_client_aborts_total.
void collect_gateway_metrics(metrics::Sink& sink, const LoopStats& loop);

}  // namespace sluice::server::gateway
