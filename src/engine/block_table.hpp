// The keys a rule with `on_deny: {block: D}` has banned, each with the time its block ends:
// bounded, shared by every event loop. The engine checks it before the rule's limit.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "sluice/core/decision.hpp"
#include "sluice/core/time.hpp"
#include "sluice/engine/quota.hpp"
#include "sluice/table/key_hash.hpp"

namespace sluice::engine::detail {

// At most kCapacity keys (about 64 bytes each: under 1.1 MiB a rule when full). A new block in
// a full stripe first drops the ended ones, then the one ending soonest: a flood of banned keys
// shortens the oldest bans, it never grows the table. Striped locks: loops meet only when
// their keys share one of kStripes stripes, and only on a refusal or a blocked key.
class BlockTable {
 public:
  static constexpr std::size_t kCapacity = 16384;
  static constexpr std::size_t kStripes = 16;

  // When the block of `h` ends, if it is blocked at `now` (an ended block is dropped).
  std::optional<core::Nanos> blocked_until(const table::KeyHash& h, core::Nanos now);
  // Blocks `h` until `until` (a later block replaces an earlier one, never the reverse).
  void block(const table::KeyHash& h, core::Nanos until, core::Nanos now);
  // Lifts the block of `h`; false when it had none.
  bool unblock(const table::KeyHash& h);
  std::size_t size() const;

 private:
  struct Hash {
    std::size_t operator()(const table::KeyHash& h) const { return h.fingerprint; }
  };
  struct Equal {
    bool operator()(const table::KeyHash& a, const table::KeyHash& b) const {
      return a.bucket == b.bucket && a.fingerprint == b.fingerprint;
    }
  };
  struct Stripe {
    mutable std::mutex mutex;
    std::unordered_map<table::KeyHash, core::Nanos, Hash, Equal> until;
  };
  Stripe& stripe(const table::KeyHash& h) { return stripes_[h.bucket % kStripes]; }

  std::array<Stripe, kStripes> stripes_;
};

// The answer to a blocked key: refused until the block ends, its limit not asked.
inline core::Decision blocked_decision(core::Nanos until, core::Nanos now, const Quota& q) {
  return core::denied(until - now, 0, until - now, q.burst > 0 ? q.burst : q.quota);
}

// A refusal by a rule that blocks: the key is blocked for `block` from `now`, and the
// refusal's retry time is the block's (the limit's own when that is later).
inline void start_block(BlockTable& blocks, const table::KeyHash& h, core::Nanos block,
                        core::Nanos now, core::Decision& d) {
  blocks.block(h, now + block, now);
  if (d.retry_after != core::kNever) d.retry_after = std::max(d.retry_after, block);
  d.reset_after = std::max(d.reset_after, block);
}

}  // namespace sluice::engine::detail
