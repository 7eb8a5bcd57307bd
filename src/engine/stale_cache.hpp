// The responses an open breaker may answer with (`fallback: stale`): the last good one of each
// route and key, in one cache for the whole process, bounded in bytes, least recently used out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "sluice/config/breaker_config.hpp"
#include "sluice/core/time.hpp"
#include "sluice/table/key_hash.hpp"

namespace sluice::engine::detail {

struct StaleEntry {
  int status = 200;
  std::string headers;  // "Name: value\r\n" lines, end-to-end fields only
  std::string body;
  core::Nanos stored = 0;
};

class StaleCache {
 public:
  // What an entry costs besides its text (the map's node, the list's, the shared block).
  static constexpr std::size_t kEntryOverhead = 160;

  explicit StaleCache(const config::StaleCacheLimits& limits) : limits_(limits) {}

  // New bounds (a reload): entries over them go now.
  void resize(const config::StaleCacheLimits& limits);
  // Keeps `e` under `key` in place of what was there; false (and nothing kept) when it is
  // larger than max_entry.
  bool put(const table::KeyHash& key, std::shared_ptr<const StaleEntry> e);
  // The entry under `key` no older than `max_age` at `now` (an older one is dropped); null if none.
  std::shared_ptr<const StaleEntry> get(const table::KeyHash& key, core::Nanos now,
                                        core::Nanos max_age);

  std::size_t max_entry() const;
  std::size_t bytes() const;
  std::size_t entries() const;
  std::uint64_t evictions() const;

  static std::size_t cost(const StaleEntry& e) {
    return e.headers.size() + e.body.size() + kEntryOverhead;
  }

 private:
  struct Key {
    std::uint64_t a;
    std::uint64_t b;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHasher {
    std::size_t operator()(const Key& k) const { return static_cast<std::size_t>(k.a ^ k.b); }
  };
  struct Slot {
    std::shared_ptr<const StaleEntry> entry;
    std::list<Key>::iterator at;  // in lru_
  };

  void erase(std::unordered_map<Key, Slot, KeyHasher>::iterator it);
  void fit(std::size_t max_bytes);

  mutable std::mutex mu_;
  config::StaleCacheLimits limits_;
  std::list<Key> lru_;  // the most recently used first
  std::unordered_map<Key, Slot, KeyHasher> map_;
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace sluice::engine::detail
