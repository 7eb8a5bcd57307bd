// Serialisation of the rate-limit response header fields: the IETF RateLimit-Policy and
// RateLimit fields (draft-ietf-httpapi-ratelimit-headers -11 or -12, structured fields), the
// legacy X-RateLimit-* fields and Retry-After, written straight into a response head.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/time.hpp"

namespace sluice::proto::http {

// One limit as the fields describe it (docs/configuration.md, "Response fields").
struct LimitField {
  std::string_view name;
  // Policy: q per w seconds (w 0: omitted).
  std::int64_t quota = 0;
  std::int64_t window_seconds = 0;
  bool concurrent = false;  // qu="concurrent-requests"
  // Status: the available quota (at least 0) and the effective window in seconds (omitted
  // when negative), written r and t (draft-11) or a and w (draft-12).
  std::int64_t remaining = 0;
  std::int64_t reset_seconds = -1;
  // False: what is left is unknown (admitted fail-open while Redis was away): the limit keeps
  // its policy item and has no status item, nor a part in the legacy fields.
  bool known = true;

  bool operator==(const LimitField&) const = default;
};

// The draft whose RateLimit syntax is written (docs/references.md): both name policies by
// sf-strings and write RateLimit-Policy alike; a RateLimit item says ;r=N;t=S in -11 (-09 and
// -10 read it too) and ;a=N;w=S in -12.
enum class RateLimitDraft : std::uint8_t { k11 = 11, k12 = 12 };

struct FieldChoice {
  bool ratelimit = true;  // RateLimit-Policy and RateLimit
  bool legacy = false;    // X-RateLimit-Limit/Remaining/Reset of the tightest limit
  RateLimitDraft draft = RateLimitDraft::k12;

  bool operator==(const FieldChoice&) const = default;
};

// Appends "Name: value\r\n" lines: RateLimit-Policy and RateLimit (one policy item and one
// status item per limit), the legacy fields from the limit with the least remaining, and
// Retry-After when `retry_after` >= 0 (a denial whose retry time is known).
void append_ratelimit_fields(std::string& out, std::span<const LimitField> limits,
                             FieldChoice choice, core::Nanos retry_after);

// The same fields as (name, value) pairs, for a reply whose headers are a list.
using FieldPairs = std::vector<std::pair<std::string_view, std::string>>;
FieldPairs ratelimit_field_pairs(std::span<const LimitField> limits, FieldChoice choice,
                                 core::Nanos retry_after);

// An sf-string: quoted, with '"' and '\' escaped; other bytes outside 0x20-0x7e dropped.
void append_sf_string(std::string& out, std::string_view s);

// Delay-seconds, rounded up, at least 1 (a client must not retry before the time).
std::int64_t retry_after_seconds(core::Nanos wait);

}  // namespace sluice::proto::http
