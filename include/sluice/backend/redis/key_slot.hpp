// The Redis Cluster hash slot of a key (CRC16-XMODEM mod 16384, hash tags honoured), so callers
// can group keys that one script call may touch together and the client can route commands.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::backend::redis {

inline constexpr std::uint16_t kSlotCount = 16384;

// CRC16-CCITT as Redis Cluster uses it (XMODEM: polynomial 0x1021, initial value 0).
std::uint16_t crc16(std::string_view data);

// The slot of `key`: if the key holds a '{' followed later by a '}' with at least one byte
// between the first '{' and the first '}' after it, only those bytes are hashed; otherwise
// the whole key is ("foo{}{bar}" hashes the whole key, "foo{{bar}}zap" hashes "{bar").
std::uint16_t key_slot(std::string_view key);

}  // namespace sluice::backend::redis
