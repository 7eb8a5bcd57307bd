// The per-key overrides of rules kept in Redis, read and written there by the admin loop
// (Loop::read_shared_overrides, Loop::write_shared_override), so every instance applies them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::engine {

// Every instance reads the generation this often, and the hash when it moved.
inline constexpr std::int64_t kSharedOverridesPollMs = 1000;

struct SharedOverridesRead {
  std::string generation;  // "0" before the first change
  // The hash's (field, limit) pairs when the generation is not the one known; nullopt when
  // it is (nothing to read), or when the hash holds more than config::kMaxSharedOverrides.
  std::optional<std::vector<std::pair<std::string, std::string>>> hash;
  bool too_many = false;
};

enum class SharedWrite {
  kDone,     // written, and the generation bumped
  kNoRedis,  // no Redis configured
  kFailed,   // Redis failed or refused
  kFull,     // a new key beyond config::kMaxSharedOverrides
};

}  // namespace sluice::engine
