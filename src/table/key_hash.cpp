// hash_key (sluice/table/key_hash.hpp) over libxxhash's XXH3-128.
#include "sluice/table/key_hash.hpp"

#include <xxhash.h>

namespace sluice::table {

KeyHash hash_key(std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return KeyHash{h.low64, h.high64};
}

}  // namespace sluice::table
