// A route's `adaptive_concurrency:` block: a concurrency limit that nobody configures, found
// from the upstream's latency by one of the adaptive algorithms (docs/overload.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/time.hpp"
#include "sluice/proto/http/ip_address.hpp"

namespace sluice::config {

enum class AdaptiveAlgorithm { kEnvoyGradient, kVegas, kGradient2, kAimd };

// Tiers run from 0 (shed first) to kTopTier (shed last).
inline constexpr int kTopTier = 9;
// Requests held waiting for a permit, at most, per route (one more is refused).
inline constexpr std::int64_t kMaxAdaptiveQueue = 10000;

struct AdaptiveConcurrency {
  AdaptiveAlgorithm algorithm = AdaptiveAlgorithm::kEnvoyGradient;
  // Unset: the algorithm's own default (docs/overload.md's tables).
  std::optional<std::int64_t> min_limit;
  std::optional<std::int64_t> max_limit;
  std::optional<std::int64_t> initial;
  // envoy-gradient: how often it measures the minimum RTT again (Envoy's min_rtt_calc_params
  // interval). Shorter follows an upstream that slows sooner, at the cost of more windows
  // spent at min_limit.
  std::optional<core::Nanos> min_rtt_interval;
  // Over the limit: wait up to max_wait for a permit (highest tier first, FIFO within a tier),
  // then refuse; 0: refuse at once.
  core::Nanos max_wait = 0;
  std::int64_t max_queue = 1000;
  int status = 503;
  std::string body = "Service Unavailable\n";
  // A request's tier: `priority_header`'s value (0..kTopTier) when the peer is one of
  // trusted_proxies, else `priority` (the route's own, default 0).
  std::string priority_header;
  int priority = 0;
  // Clients (after trusted_proxies) that are never limited.
  std::vector<proto::http::Cidr> bypass;

  friend bool operator==(const AdaptiveConcurrency&, const AdaptiveConcurrency&) = default;
};

}  // namespace sluice::config
