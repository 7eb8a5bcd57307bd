// hash_key (sluice/table/key_hash.hpp) over libxxhash's XXH3-128.
#include "sluice/table/key_hash.hpp"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t, for hashing a key in pieces on the stack
#include <xxhash.h>

namespace sluice::table {

KeyHash hash_key(std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return KeyHash{h.low64, h.high64};
}

static_assert(sizeof(XXH3_state_t) <= 640 && alignof(XXH3_state_t) <= 64);

KeyHasher::KeyHasher() { XXH3_128bits_reset(reinterpret_cast<XXH3_state_t*>(state_)); }

void KeyHasher::add(std::string_view piece) {
  XXH3_128bits_update(reinterpret_cast<XXH3_state_t*>(state_), piece.data(), piece.size());
}

KeyHash KeyHasher::finish() const {
  const XXH128_hash_t h = XXH3_128bits_digest(reinterpret_cast<const XXH3_state_t*>(state_));
  return KeyHash{h.low64, h.high64};
}

}  // namespace sluice::table
