// The configuration of the Envoy rate limit service (docs/envoy-rls.md), in envoyproxy/ratelimit's
// YAML format: domains, each a tree of descriptors with their limits. Files become a validated
// RlsConfig, or every error found with its file and line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/expected.hpp"
#include "sluice/core/time.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::server {

// envoyproxy/ratelimit's units. The values are the RLS proto's RateLimitResponse.RateLimit.Unit
// numbers (and envoy.type.v3.RateLimitUnit's).
enum class RlsUnit : int { kSecond = 1, kMinute = 2, kHour = 3, kDay = 4 };

core::Nanos unit_length(RlsUnit unit);     // 1s, 1m, 1h, 24h
std::string_view unit_name(RlsUnit unit);  // "second", "minute", "hour", "day"

struct RlsRateLimit {
  std::uint32_t requests_per_unit = 0;  // 0 refuses every request (a block list entry)
  RlsUnit unit = RlsUnit::kSecond;
  bool unlimited = false;  // answers OK without counting; unit and requests_per_unit unset
  std::string name;        // reported back in the status's current_limit
  // Sluice extension: the algorithm that enforces the limit. Empty: fixed-window, as
  // envoyproxy/ratelimit enforces it.
  std::string algorithm;
};

struct RlsDescriptor {
  std::string key;
  std::string value;  // empty: any value of the key; "prefix*": any value starting with prefix
  std::optional<RlsRateLimit> rate_limit;  // none: no limit at this level
  bool shadow_mode = false;  // counted and reported, never makes the answer OVER_LIMIT
  std::vector<RlsDescriptor> descriptors;
  int line = 0;
};

struct RlsDomain {
  std::string name;
  std::vector<RlsDescriptor> descriptors;
  std::string file;
  int line = 0;
};

struct RlsConfig {
  std::vector<RlsDomain> domains;
  // Memory budget of each limit's key table (mapped once, touched as keys arrive). A limit
  // reached only through entries with fixed values has one key and takes one page instead.
  std::size_t memory_per_limit = 16u << 20;
};

struct RlsConfigError {
  std::string file;
  int line = 0;  // 1-based; 0 when the problem is the file itself
  std::string message;
  std::string format() const;  // "file:line: message", or "file: message"
};

struct RlsLoaded {
  std::optional<RlsConfig> config;  // set iff errors is empty
  std::vector<RlsConfigError> errors;
};

// Each file holds one domain, or several as YAML documents separated by `---`. A domain may be
// defined once across all files.
RlsLoaded load_rls_config_files(const std::vector<std::string>& paths);
RlsLoaded load_rls_config_text(std::string_view yaml, const std::string& file_name);

// The Sluice limit that enforces `limit` (not unlimited): fixed-window:limit=N,window=UNIT by
// default, or the algorithm it names, with the same number of requests per unit. The error
// lists the algorithms accepted.
core::Expected<spec::LimitSpec> rls_limit_spec(const RlsRateLimit& limit);

}  // namespace sluice::server
