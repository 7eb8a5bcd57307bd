// The Envoy rate limit service's configuration as data (docs/envoy-rls.md): domains in
// envoyproxy/ratelimit's format, each a tree of descriptors with their limits, from an `rls:`
// section of the main config or from envoyproxy/ratelimit files.
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

namespace sluice::config {

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
  friend bool operator==(const RlsRateLimit&, const RlsRateLimit&) = default;
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
  // Where it was read: "" for a domain of the main config's `rls.domains` (written back with
  // it; the admin API may change it), else the envoyproxy/ratelimit file it came from.
  std::string file;
  int line = 0;
};

// The Sluice limit that enforces `limit` (not unlimited): fixed-window:limit=N,window=UNIT by
// default, or the algorithm it names, with the same number of requests per unit. The error
// lists the algorithms accepted.
core::Expected<spec::LimitSpec> rls_limit_spec(const RlsRateLimit& limit);

}  // namespace sluice::config
