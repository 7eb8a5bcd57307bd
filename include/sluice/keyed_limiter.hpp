// sluice::KeyedLimiter: one limit applied per key (a client address, a user, an API key), in a
// memory budget fixed at construction: what a gateway's per-client limiting is made of.
// Installed with libsluice; includes only the standard library (C++17 or later).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "sluice/decision.hpp"
#include "sluice/limit.hpp"

namespace sluice {

// Each key has the state of its own Limiter, created at the key's first request. The states
// live in a table of `memory_bytes`, allocated at construction and never grown: 16 or 24 bytes
// a key (docs/architecture.md has the memory maths), so 64 MiB holds millions of keys. When the
// table is full a new key evicts one not used recently (or one whose state is back to idle,
// which changes nothing). An evicted key that comes back starts over as new: most algorithms
// then admit it sooner, none later, except smooth-warmup, which starts cold again. Keys are
// hashed (XXH3-128), not stored: any bytes, any length.
//
// Thread-safe, and scales with threads: there is no global lock; threads meet only on the
// same key. Errors: LimitError from the constructors (a bad spec; sliding-log, whose per-key
// log has no fixed size; a budget below one bucket of 8 keys, 128 or 192 bytes);
// std::invalid_argument for a cost below 1. Not copyable; movable.
class KeyedLimiter {
 public:
  KeyedLimiter(const Limit& limit, std::size_t memory_bytes);
  KeyedLimiter(std::string_view spec, std::size_t memory_bytes);
  KeyedLimiter(KeyedLimiter&&) noexcept;
  KeyedLimiter& operator=(KeyedLimiter&&) noexcept;
  ~KeyedLimiter();

  // As Limiter's calls of the same names, for the key's own state.
  bool allow(std::string_view key, Time now = Clock::now()) { return try_acquire(key, 1, now); }
  bool try_acquire(std::string_view key, std::int64_t cost, Time now = Clock::now());
  std::optional<Duration> reserve(std::string_view key, std::int64_t cost = 1,
                                  Duration max_wait = kForever, Time now = Clock::now());
  Decision decide(std::string_view key, std::int64_t cost = 1, Duration max_wait = Duration::zero(),
                  Time now = Clock::now());

  struct Stats {
    std::size_t keys = 0;          // keys held now
    std::size_t capacity = 0;      // keys the budget holds
    std::uint64_t evictions = 0;   // keys pushed out by new ones while still in use
    std::uint64_t idle_drops = 0;  // keys dropped because their state was back to idle
    std::size_t memory_bytes = 0;  // the budget in use (whole buckets of the one given)
  };
  // Counters read without stopping the deciders: a consistent snapshot only when idle.
  Stats stats() const;

  const Limit& limit() const;

  class Impl;  // src/api/keyed_limiter.cpp

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
