// What a frontend asks the engine, as views into the frontend's own buffers: an HTTP request
// (the gateway), one key against a configured rule or an inline limit (the decision API,
// SLUICE.CHECK), a CL.THROTTLE call, an Envoy RLS request. One entry point takes any of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "sluice/core/time.hpp"
#include "sluice/engine/request_view.hpp"

namespace sluice::engine {

// Which frontend asks for a rule's decision: the `frontend` label of its counters.
enum class Via : std::uint8_t { kCheckApi, kSluiceCheck };
inline constexpr std::size_t kVias = 2;

// One key against a configured rule. A delay rule waits up to its max_wait; others decide at
// once. A concurrency rule's permit is held until released (Outcome::lease).
// `tier` names the rule's tier (the caller's own attribute, as a trusted proxy's is believed in
// the gateway); empty or unknown: the tier `default`. The key's override, if any, comes first.
struct RuleAsk {
  std::string_view rule;
  std::string_view key;
  std::int64_t cost = 1;
  Via via = Via::kCheckApi;
  std::string_view tier = {};
};

// One key against a limit given in the request ("gcra:rate=10/s,burst=5"); its table is made
// at first use and shared by every later ask with the same canonical spec.
struct InlineAsk {
  std::string_view limit;
  std::string_view key;
  std::int64_t cost = 1;
  core::Nanos max_wait = 0;
};

// redis-cell's CL.THROTTLE: GCRA with its parameters in every call, one state per key
// whatever the parameters (as redis-cell keeps it). `quantity` 0 looks without taking.
struct ThrottleAsk {
  std::string_view key;
  std::int64_t max_burst = 0;
  std::int64_t count = 0;
  std::int64_t period = 0;  // seconds
  std::int64_t quantity = 1;
};

// Envoy's RateLimitRequest: a domain and descriptors of (key, value) entries, each matched
// against the domain's descriptor tree as envoyproxy/ratelimit matches it.
struct RlsEntry {
  std::string_view key;
  std::string_view value;
};
// A descriptor's own limit (RateLimitDescriptor.limit), which replaces the configured one.
struct RlsOverride {
  std::uint32_t requests_per_unit = 0;
  int unit = 0;  // envoy.type.v3.RateLimitUnit
};
struct RlsDescriptorView {
  std::span<const RlsEntry> entries;
  std::optional<RlsOverride> limit;
};
struct RlsAsk {
  std::string_view domain;
  std::span<const RlsDescriptorView> descriptors;
  std::uint32_t hits_addend = 0;  // 0 counts as 1, as in Envoy
};

// One key of a configured rule, looked at or reset (GET and DELETE /v1/rules/{name}/keys/{key},
// SLUICE.PEEK, SLUICE.RESET): its state without charging it, or forgotten so that its next
// request finds a full quota (redis-cell#37, gubernator's RESET_REMAINING). The outcome's
// `total` is the state (core::peek), after a reset the full quota; `key_seen` says whether
// there was state for the key.
// kBlock and kUnblock look at and lift the key's block (on_deny: block; GET and DELETE
// /v1/rules/{name}/blocks/{key}): `key_seen` says whether it is blocked, `total` is the refusal
// it gets (retry_after: the block's time left).
// kReport charges `cost` more to the key (negative: gives part of a reserve back) without
// deciding: a cost known after the fact (POST /v1/report, Limitador's Report); `total` is the
// state after it. A rule of an algorithm that settles (token-bucket, gcra, fixed-window,
// sliding-window) only, local or kept in Redis without leasing (lease: 0).
enum class KeyOp { kPeek, kReset, kBlock, kUnblock, kReport };
struct KeyAsk {
  std::string_view rule;
  std::string_view key;
  KeyOp op = KeyOp::kPeek;
  std::int64_t cost = 0;  // kReport
};

using Ask = std::variant<RequestView, RuleAsk, InlineAsk, ThrottleAsk, RlsAsk, KeyAsk>;

}  // namespace sluice::engine
