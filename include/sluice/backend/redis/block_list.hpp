// A rule's list of the keys it blocks in Redis (on_deny: block), for GET /v1/rules/{name}/blocks:
// a sorted set per rule, member the key, score the Unix millisecond (Redis's clock) its block
// ends. The block itself is STATE_KEY:block, set by the script that refused; this set only
// lists it, and is written apart from the script because it and a key's state may be in
// different slots of a cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/backend/redis/client.hpp"
#include "sluice/backend/redis/remote_limit.hpp"
#include "sluice/backend/redis/reply.hpp"

namespace sluice::backend::redis {

// Members kept at most: past it a new block pushes out the one ending soonest (it stays in force,
// and GET/DELETE of its key still see it; it is only not listed).
inline constexpr std::size_t kBlockListCapacity = 10000;

// "sluice:blocks:{RULE}": one slot per rule.
std::string block_list_key(std::string_view rule);
// The key whose PTTL is the block's time left: the limit's state key and ":block".
std::string block_key(const RemoteLimit& limit, std::string_view key);

// KEYS: the list. ARGV: when the block ends (Unix ms), the key, kBlockListCapacity. Adds the
// key (or moves its end), pushes out the ones ending soonest past the cap, and lets the set
// expire with its last block, so a rule that stops blocking leaves nothing behind.
const Script& block_list_add_script();

// One EVAL: drops the ended members, then answers {members left, the n ending last}.
std::vector<std::string> block_list_read(const std::string& list, std::size_t n);
struct BlockListRead {
  std::size_t total = 0;          // members left
  std::vector<std::string> keys;  // ending last first
};
// nullopt: not the reply of block_list_read (an error, a failure).
std::optional<BlockListRead> parse_block_list(const Outcome& outcome);

}  // namespace sluice::backend::redis
