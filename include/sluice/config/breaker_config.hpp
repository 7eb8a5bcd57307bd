// A route's circuit breaker as configured (`breaker:`), and the stale cache's bounds
// (`stale_cache:`): what trips it, what counts as a failure, and what an open breaker answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/breaker.hpp"
#include "sluice/core/time.hpp"

namespace sluice::config {

// `errors:`: which ends of an upstream exchange count as failures.
struct BreakerErrors {
  bool any_5xx = true;        // `5xx`
  bool any_4xx = false;       // `4xx`
  std::vector<int> statuses;  // `503`: that status exactly
  bool timeout = true;        // `timeout`: no answer within timeouts.connect or timeouts.upstream
  bool unreachable = true;    // `unreachable`: no connection, or it broke before the answer
  friend bool operator==(const BreakerErrors&, const BreakerErrors&) = default;
};

// `fallback:`: what an open breaker answers. With `stale`, the last good response of the
// route and key while it is within `stale_for`; the status answer when none is.
struct BreakerFallback {
  int status = 503;
  std::string body = "Service Unavailable\n";
  std::vector<std::pair<std::string, std::string>> headers;
  bool stale = false;
  core::Nanos stale_for = 0;
  friend bool operator==(const BreakerFallback&, const BreakerFallback&) = default;
};

struct BreakerConfig {
  core::Breaker::Params params;
  BreakerErrors errors;
  BreakerFallback fallback;
  friend bool operator==(const BreakerConfig&, const BreakerConfig&) = default;
};

// `stale_cache: {max_bytes, max_entry}`: one cache for every route with `fallback: stale`,
// bounded whole; a response larger than max_entry is not kept.
struct StaleCacheLimits {
  std::size_t max_bytes = 64u << 20;
  std::size_t max_entry = 1u << 20;
  friend bool operator==(const StaleCacheLimits&, const StaleCacheLimits&) = default;
};

}  // namespace sluice::config
