// The stale cache (stale_cache.hpp): a map and a recency list under one lock; every request
// through a stale route touches it at most twice (a lookup while open, a store after a 2xx GET).
#include "stale_cache.hpp"

#include <iterator>

namespace sluice::engine::detail {

void StaleCache::resize(const config::StaleCacheLimits& limits) {
  std::lock_guard lock(mu_);
  limits_ = limits;
  for (auto it = map_.begin(); it != map_.end();) {
    auto next = std::next(it);
    if (cost(*it->second.entry) > limits_.max_entry) erase(it);
    it = next;
  }
  fit(limits_.max_bytes);
}

bool StaleCache::put(const table::KeyHash& key, std::shared_ptr<const StaleEntry> e) {
  const std::size_t size = cost(*e);
  std::lock_guard lock(mu_);
  if (size > limits_.max_entry) return false;
  const Key k{key.bucket, key.fingerprint};
  if (auto it = map_.find(k); it != map_.end()) erase(it);
  fit(limits_.max_bytes - size);
  lru_.push_front(k);
  map_.emplace(k, Slot{std::move(e), lru_.begin()});
  bytes_ += size;
  return true;
}

std::shared_ptr<const StaleEntry> StaleCache::get(const table::KeyHash& key, core::Nanos now,
                                                  core::Nanos max_age) {
  std::lock_guard lock(mu_);
  const auto it = map_.find(Key{key.bucket, key.fingerprint});
  if (it == map_.end()) return nullptr;
  if (now - it->second.entry->stored > max_age) {
    erase(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second.at);
  return it->second.entry;
}

std::size_t StaleCache::max_entry() const {
  std::lock_guard lock(mu_);
  return limits_.max_entry;
}

std::size_t StaleCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

std::size_t StaleCache::entries() const {
  std::lock_guard lock(mu_);
  return map_.size();
}

std::uint64_t StaleCache::evictions() const {
  std::lock_guard lock(mu_);
  return evictions_;
}

void StaleCache::erase(std::unordered_map<Key, Slot, KeyHasher>::iterator it) {
  bytes_ -= cost(*it->second.entry);
  lru_.erase(it->second.at);
  map_.erase(it);
}

void StaleCache::fit(std::size_t max_bytes) {
  while (bytes_ > max_bytes && !lru_.empty()) {
    erase(map_.find(lru_.back()));
    ++evictions_;
  }
}

}  // namespace sluice::engine::detail
