// The store's units of work (store.hpp): a decision's job and the parts of it (or the lone
// takes, releases and renewals) that go into one script request; shared by the store's files.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sluice/backend/redis/store.hpp"

namespace sluice::backend::redis {

struct Store::Job {
  Query query;
  Answered done;
  absl::InlinedVector<core::Decision, 1> each;
  int parts_left = 0;
  Source source = Source::kRedis;
  std::vector<RemoteLease> leases;
  bool seen = false;
  bool settlement = false;  // Store::settle's: no one waits on it, so a failure is logged here
};

// A slice of work for one script request: some of a job's items (all in one slot, one
// max-wait), a leasing take for a pool, a release or a renewal.
struct Store::Part {
  std::shared_ptr<Job> job;           // null for takes, releases and renewals
  absl::InlinedVector<int, 1> items;  // indexes into job->query.items
  RequestKind kind = RequestKind::kDecide;
  std::int64_t cost = 1;
  core::Nanos max_wait = 0;
  std::uint16_t slot = 0;
  QueryItem target;  // takes, releases and renewals: the limit and key
};

// Permits leased from Redis for one key, spent here until they run out or expire.
struct Store::Pool {
  std::int64_t permits = 0;
  core::Nanos expires = 0;
  bool taking = false;
  std::deque<std::shared_ptr<Job>> waiting;

  bool can_give(std::int64_t cost, core::Nanos now) const {
    return expires > now && permits >= cost;
  }
  // `cost` permits spent (can_give first): an admission that says what is left here.
  core::Decision give(std::int64_t cost) {
    permits -= cost;
    return core::Decision{true, 0, permits, 0, 0, -1};
  }
};

// A concurrency permit a running request holds, renewed until its holder releases it or is gone.
struct Store::Held {
  RemoteLease lease;
  std::weak_ptr<const void> holder;
  core::Nanos due = 0;  // the next renewal
};

// A look (peek, reset, a block's look or lift): Redis's answer only.
inline bool looks_only(RequestKind k) {
  return k == RequestKind::kPeek || k == RequestKind::kReset || k == RequestKind::kBlockPeek ||
         k == RequestKind::kUnblock;
}
// A reset or an unblock: the refusals every loop kept of the key are forgotten.
inline bool forgets(RequestKind k) {
  return k == RequestKind::kReset || k == RequestKind::kUnblock;
}
// Redis's answer or none, never a failure policy's: a look, and a settlement (applied in Redis
// or lost).
inline bool redis_only(RequestKind k) { return looks_only(k) || k == RequestKind::kSettle; }

}  // namespace sluice::backend::redis
