// A rule's blocked keys (on_deny: block) as GET /v1/rules/{name}/blocks lists them
// (Loop::list_blocks): from the rule's block table in this process, or from the rule's list
// of blocks in Redis, each checked against the block Redis enforces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/core/time.hpp"
#include "sluice/engine/outcome.hpp"

namespace sluice::engine {

struct BlockedKey {
  // Raw, its first kKeyBytes bytes (cut at a UTF-8 character's start); or under log_key: hash
  // the whole key's hash, 16 hex digits, as the access log and the top keys show it.
  std::string key;
  std::size_t key_bytes = 0;  // the whole key's size (more than key's when it was cut)
  core::Nanos left = 0;       // until the block ends
};

struct BlockList {
  static constexpr std::size_t kKeyBytes = 256;
  static constexpr std::size_t kDefaultListed = 100;
  static constexpr std::size_t kMaxListed = 1000;  // n at most (a Redis rule: a PTTL each)

  // Refused: kUnknownRule, kNoBlocks (no on_deny: block), kUnavailable (Redis did not answer).
  ErrorKind error_kind = ErrorKind::kNone;
  std::string error;

  bool redis = false;   // the rule's blocks are kept in Redis
  bool hashed = false;  // log_key: hash
  // Blocks in force (Redis: members of the rule's list whose end has not passed), and the most
  // kept (local: the table, past which the one ending soonest is lifted; Redis: the list, past
  // which the one ending soonest is no longer listed).
  std::size_t total = 0;
  std::size_t capacity = 0;
  std::size_t read = 0;  // looked at for `keys` (Redis: some may have been lifted meanwhile)
  // The longest left first, then by key; at most the n asked.
  std::vector<BlockedKey> keys;
};

}  // namespace sluice::engine
