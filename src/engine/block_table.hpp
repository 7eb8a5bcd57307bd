// The keys a rule with `on_deny: {block: D}` has banned, each with the time its block ends and
// its text (for the listing): bounded, shared by every event loop. The engine checks it before
// the rule's limit.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sluice/core/decision.hpp"
#include "sluice/core/time.hpp"
#include "sluice/engine/block_list.hpp"
#include "sluice/engine/quota.hpp"
#include "sluice/table/key_hash.hpp"

namespace sluice::engine::detail {

// What malloc takes for `n` bytes (glibc: an 8-byte header, 16-byte steps, 32 at least).
constexpr std::size_t malloc_bytes(std::size_t n) {
  return std::max<std::size_t>(32, (n + 8 + 15) / 16 * 16);
}

// At most kCapacity keys. A new block in a full stripe first drops the ended ones, then the one
// ending soonest: a flood of banned keys shortens the oldest bans, it never grows the table.
// Striped locks: loops meet only when their keys share one of kStripes stripes, and only on a
// refusal or a blocked key. A blocked-key check finds the entry by hash and reads its end only;
// the text is written once, when the block starts (a refusal), and read by the listing.
//
// Memory: an entry is kEntryBytes, 128 bytes on 64-bit (its end's node and its text's node,
// and their bucket slots), plus the text's own allocation when it is longer than a std::string
// keeps inline (15 bytes): at most kKeyBytes + 1, 272 bytes as malloc rounds it. Keys of up to
// 15 bytes (an IPv4 address): 16,384 x 128 B = 2 MiB when full; keys of kKeyBytes or more:
// 16,384 x (128 + 272) B = 6.25 MiB at most. memory_bytes() counts what is held, as the rule's
// memory.
class BlockTable {
 public:
  static constexpr std::size_t kCapacity = 16384;
  static constexpr std::size_t kStripes = 16;
  // A longer key's text is kept cut to this (cut_key); its block is the whole key's (by hash).
  static constexpr std::size_t kKeyBytes = BlockList::kKeyBytes;

  // When the block of `h` ends, if it is blocked at `now` (an ended block is dropped).
  std::optional<core::Nanos> blocked_until(const table::KeyHash& h, core::Nanos now);
  // Blocks `h` (whose text is `key`) until `until` (a later block replaces an earlier one,
  // never the reverse).
  void block(const table::KeyHash& h, std::string_view key, core::Nanos until, core::Nanos now);
  // Lifts the block of `h`; false when it had none.
  bool unblock(const table::KeyHash& h);
  std::size_t size() const;
  std::size_t memory_bytes() const { return bytes_.load(std::memory_order_relaxed); }

  struct Listed {
    table::KeyHash hash{};
    core::Nanos until = 0;
    std::string text;            // at most kKeyBytes
    std::uint32_t key_size = 0;  // the whole key's bytes (more than text's: it was cut)
  };
  // Up to `n` of the blocks in force at `now`, the longest left first (then by text), and in
  // `live` how many are in force. Ended blocks are dropped on the way. Each stripe is locked
  // while its blocks are copied out (at most kCapacity / kStripes of them); sorted unlocked.
  std::vector<Listed> list(std::size_t n, core::Nanos now, std::size_t& live);

 private:
  struct Text {
    std::string text;
    std::uint32_t key_size = 0;
  };
  // noexcept: the maps keep no hash beside each node (the fingerprint is the hash).
  struct Hash {
    std::size_t operator()(const table::KeyHash& h) const noexcept { return h.fingerprint; }
  };
  struct Equal {
    bool operator()(const table::KeyHash& a, const table::KeyHash& b) const noexcept {
      return a.bucket == b.bucket && a.fingerprint == b.fingerprint;
    }
  };
  using Ends = std::pmr::unordered_map<table::KeyHash, core::Nanos, Hash, Equal>;
  using Texts = std::unordered_map<table::KeyHash, Text, Hash, Equal>;
  // Two maps: a blocked-key check reads `until` only, whose nodes are as small as they were
  // before keys had text, and sit together in the stripe's pool, not between the texts'
  // allocations, which would spread them over more cache lines (with the text in the node, a
  // full table's checks took about 1.5 times as long); `texts` is touched when a block starts,
  // is lifted or ends, and by the listing. bench/block_table_bench.cpp measures the checks
  // beside the table of hashes only. The pool keeps the nodes freed for the next blocks: at
  // most a full stripe's.
  struct Stripe {
    mutable std::mutex mutex;  // guards the pool too
    std::pmr::unsynchronized_pool_resource pool;
    Ends until{&pool};
    Texts texts;
  };
  // The end's node in the pool, the text's node as malloc rounds it, and their bucket slots.
  static constexpr std::size_t kEntryBytes =
      sizeof(Ends::value_type) + sizeof(void*) +
      malloc_bytes(sizeof(Texts::value_type) + sizeof(void*)) + 2 * sizeof(void*);

  Stripe& stripe(const table::KeyHash& h) { return stripes_[h.bucket % kStripes]; }
  // The bytes an entry holds (kEntryBytes and its text's allocation).
  static std::size_t bytes_of(const Text& t);
  // Drops `it` (and its text) from `s`, counting its bytes off.
  void drop(Stripe& s, Ends::iterator it);

  std::array<Stripe, kStripes> stripes_;
  std::atomic<std::size_t> bytes_{0};
};

// `key` cut to at most `max` bytes, at the start of a UTF-8 character (so at most 3 bytes
// less): a cut key that was text stays text.
std::string_view cut_key(std::string_view key, std::size_t max);

// The answer to a blocked key: refused until the block ends, its limit not asked.
inline core::Decision blocked_decision(core::Nanos until, core::Nanos now, const Quota& q) {
  return core::denied(until - now, 0, until - now, q.burst > 0 ? q.burst : q.quota);
}

// A refusal by a rule that blocks: the key (`h`, text `key`) is blocked for `block` from
// `now`, and the refusal's retry time is the block's (the limit's own when that is later).
inline void start_block(BlockTable& blocks, const table::KeyHash& h, std::string_view key,
                        core::Nanos block, core::Nanos now, core::Decision& d) {
  blocks.block(h, key, now + block, now);
  if (d.retry_after != core::kNever) d.retry_after = std::max(d.retry_after, block);
  d.reset_after = std::max(d.reset_after, block);
}

}  // namespace sluice::engine::detail
