// The hash of a limiter key: 128 bits of XXH3, split into the bucket choice and a fingerprint
// stored in the slot. Tables store no key bytes; docs/architecture.md argues the collision odds.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::table {

struct KeyHash {
  std::uint64_t bucket;       // chooses the bucket (multiply-shift over the bucket count)
  std::uint64_t fingerprint;  // independent bits, identifies the key inside its bucket
};

// XXH3-128 (libxxhash): fast on short keys, and its two halves are independent, so a key is
// told apart by 64 bits of bucket choice plus the slot's fingerprint bits.
KeyHash hash_key(std::string_view key);

// hash_key of a key given in pieces, without joining them: add(a), add("|"), add(b) gives
// hash_key("a|b"). The engine hashes a rule's key where its parts stand in the request.
class KeyHasher {
 public:
  KeyHasher();
  void add(std::string_view piece);
  KeyHash finish() const;

 private:
  // XXH3's streaming state (XXH3_state_t, 576 bytes, 64-byte aligned), kept opaque so the
  // header needs no xxhash.h.
  alignas(64) unsigned char state_[640];
};

}  // namespace sluice::table
