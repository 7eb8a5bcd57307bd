// The sluice instances that share one Redis: each keeps a heartbeat there (its own description
// under a TTL) and any of them lists all (Sentinel's machine list, with no cluster of our own).
#pragma once

#include <cstdint>
#include <string>

namespace sluice::engine {

// A heartbeat is written every kHeartbeatEveryMs and lives kHeartbeatTtlMs: an instance whose
// heartbeat has expired missed two in a row (dead, hung, or cut off from Redis).
inline constexpr std::int64_t kHeartbeatEveryMs = 5000;
inline constexpr std::int64_t kHeartbeatTtlMs = 15000;
// An instance not seen for this long is forgotten by the next listing.
inline constexpr std::int64_t kInstanceForgetMs = 3600 * 1000;
// A listing reads at most this many (restart churn cannot make one listing unbounded).
inline constexpr int kMaxInstancesListed = 1024;

struct InstanceRecord {
  std::string id;
  std::string about;              // what the instance wrote (JSON); empty once it expired
  std::int64_t last_seen_ms = 0;  // unix ms of its latest heartbeat, by its own clock
  bool live = false;              // its heartbeat has not expired
};

}  // namespace sluice::engine
