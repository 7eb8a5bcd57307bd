// The keys a rule met most over the last few minutes, by denials or by requests: what the
// engine's per-rule sketch (src/engine/top_sketch.hpp) reports to GET /v1/rules/{name}/top.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::engine {

enum class TopBy { kDenied, kRequests };

// One key's figures: estimates that may exceed the true count by the sketch's error (see
// docs/admin-api.md, "Top keys").
struct TopKey {
  std::string key;  // raw (its first TopKeys::kKeyBytes bytes), or its hash under log_key: hash
  std::uint64_t requests = 0;
  std::uint64_t denied = 0;
};

struct TopKeys {
  static constexpr std::size_t kCapacity = 64;  // keys held per minute and per ranking
  static constexpr std::size_t kKeyBytes = 47;  // a longer key is kept (and shown) cut to this
  static constexpr int kMinutes = 5;            // the window: this many one-minute sketches
  static constexpr std::int64_t kWindowSeconds = kMinutes * 60;
  static constexpr std::size_t kMaxRules = 1024;  // rules that may hold top keys at once

  // The rule was decided while kMaxRules other rules held theirs: it keeps none.
  bool refused = false;

  std::vector<TopKey> keys;  // at most the n asked, sorted by the ranking asked, descending
};

}  // namespace sluice::engine
