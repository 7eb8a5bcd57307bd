// The per-key overrides of rules kept in Redis, read and written there by the admin loop
// (Loop::read_shared_overrides, Loop::write_shared_override), so every instance applies them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::engine {

// The Redis hash of every shared override (config/shared_overrides.hpp gives its entries; one
// hash tag: one slot of a cluster), and the counter bumped by every change, which instances
// poll to know when to read the hash again.
inline constexpr std::string_view kSharedOverridesHash = "sluice:{overrides}";
inline constexpr std::string_view kSharedOverridesGeneration = "sluice:{overrides}:gen";
// The most shared overrides kept: a PUT beyond it is refused, a larger hash is not read.
inline constexpr std::size_t kMaxSharedOverrides = 10000;

// Every instance reads the generation this often, and the hash when it moved.
inline constexpr std::int64_t kSharedOverridesPollMs = 1000;

struct SharedOverridesRead {
  std::string generation;  // "0" before the first change
  // The hash's (field, limit) pairs when the generation is not the one known; nullopt when
  // it is (nothing to read), or when the hash holds more than kMaxSharedOverrides.
  std::optional<std::vector<std::pair<std::string, std::string>>> hash;
  bool too_many = false;
};

enum class SharedWrite {
  kDone,     // written, and the generation bumped
  kNoRedis,  // no Redis configured
  kFailed,   // Redis failed or refused
  kFull,     // a new key beyond kMaxSharedOverrides
};

}  // namespace sluice::engine
