// What a frontend asks the Redis backend and what it answers: plain values, so the rules
// layer can build and read them without seeing the backend's event-loop machinery.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "sluice/backend/redis/remote_limit.hpp"
#include "sluice/backend/redis/script_codec.hpp"
#include "sluice/core/decision.hpp"

namespace sluice::backend::redis {

struct QueryItem {
  std::shared_ptr<const RemoteLimit> limit;
  std::string key;
  core::Nanos max_wait = 0;
  // What a decision charges this limit, when not the query's cost (a rule's reserve, settled
  // after the response); 0: the query's cost.
  std::int64_t cost = 0;
  std::int64_t cost_in(std::int64_t query_cost) const { return cost > 0 ? cost : query_cost; }
  // A calendar window's: the Unix time of the ask on the engine's wall clock, which names the
  // windows the script picks from (and the local fallback's window).
  core::Nanos unix_now = 0;
};

// One request against one or more Redis limits, all of which must allow it.
// kPeek and kReset: one item, no cost, never a failure policy's answer (a failure is
// Source::kFailClosed with an overflowed decision: the caller reports Redis unavailable).
// kSettle: the same, with `cost` the signed amount settled (a failure: the settlement is lost).
struct Query {
  // Mostly one (a route's one rule kept in Redis): held in place, copied without allocating.
  absl::InlinedVector<QueryItem, 1> items;
  std::int64_t cost = 1;
  RequestKind kind = RequestKind::kDecide;
};

// Where an answer came from (the metrics' `source` label).
enum class Source { kRedis, kLease, kFailOpen, kFailClosed, kLocal, kDenialCache };
inline constexpr int kSources = 6;
std::string_view source_name(Source s);

// A concurrency permit held in Redis: released with Store::release when the request is done;
// if the instance dies first, Redis drops it after the limit's concurrency_lease_ttl.
struct RemoteLease {
  std::shared_ptr<const RemoteLimit> limit;
  std::string key;
  std::int64_t id = 0;
};

struct Answer {
  core::Decision combined;
  absl::InlinedVector<core::Decision, 1> each;  // per query item
  Source source = Source::kRedis;
  std::vector<RemoteLease> leases;
  bool seen = false;  // kPeek, kReset: Redis held state for the key
};

}  // namespace sluice::backend::redis
