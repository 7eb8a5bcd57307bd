// Serialisation of the rate-limit response header fields: the IETF RateLimit-Policy and
// RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured fields), Retry-After.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/time.hpp"

namespace sluice::proto::http {

// One quota policy item: `"name";q=100;w=60` (w omitted when 0; qu when not "requests").
struct QuotaPolicy {
  std::string_view name;
  std::int64_t quota = 0;
  std::int64_t window_seconds = 0;
  std::string_view unit;  // "" = requests (the default); "concurrent-requests"
};

// One service limit item: `"name";r=5;t=30` (t omitted when negative).
struct QuotaStatus {
  std::string_view name;
  std::int64_t remaining = 0;
  std::int64_t reset_seconds = -1;
};

// An sf-string: quoted, with '"' and '\' escaped; other bytes outside 0x20-0x7e dropped.
std::string sf_string(std::string_view s);

std::string ratelimit_policy(std::span<const QuotaPolicy> items);
std::string ratelimit(std::span<const QuotaStatus> items);

// Delay-seconds, rounded up, at least 1 (a client must not retry before the time).
std::int64_t retry_after_seconds(core::Nanos wait);

}  // namespace sluice::proto::http
