// key_slot and crc16 (sluice/backend/redis/key_slot.hpp), as the Redis Cluster spec defines them.
#include "sluice/backend/redis/key_slot.hpp"

#include <array>

namespace sluice::backend::redis {

namespace {

constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned i = 0; i < 256; ++i) {
    unsigned crc = i << 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000U) != 0 ? (crc << 1) ^ 0x1021U : crc << 1;
    }
    table[i] = static_cast<std::uint16_t>(crc & 0xFFFFU);
  }
  return table;
}

constexpr auto kCrc16Table = make_crc16_table();

}  // namespace

std::uint16_t crc16(std::string_view data) {
  unsigned crc = 0;
  for (const char c : data) {
    const auto byte = static_cast<unsigned char>(c);
    crc = ((crc << 8) ^ kCrc16Table[((crc >> 8) ^ byte) & 0xFFU]) & 0xFFFFU;
  }
  return static_cast<std::uint16_t>(crc);
}

std::uint16_t key_slot(std::string_view key) {
  const auto open = key.find('{');
  if (open != std::string_view::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return static_cast<std::uint16_t>(crc16(key) & (kSlotCount - 1));
}

}  // namespace sluice::backend::redis
