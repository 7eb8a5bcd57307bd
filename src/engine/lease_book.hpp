// Concurrency permits the decision service hands out: a caller that asked "may I start?" on
// a concurrency rule holds a permit until it says it is done (a token) or its time is up.
// Bounded per rule; its memory goes back once the permits do. Internal to the engine; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sluice/core/time.hpp"
#include "sluice/local/policy.hpp"

namespace sluice::engine::detail {

class LeaseBook {
 public:
  LeaseBook();

  // Keeps `lease` for `owner` (a rule) until release(token) or `ttl` after `now`; the token is
  // "l-" + 16 hex digits, not guessable from another's. nullopt when `owner` already holds
  // `cap` permits: the lease is dropped, so its permit goes back.
  std::optional<std::string> keep(local::Lease lease, std::string_view owner, std::int64_t cap,
                                  core::Nanos now, core::Nanos ttl);
  // False when the token is not one this book holds (never was, released, or expired).
  bool release(std::string_view token);
  // Gives back every permit whose time is up.
  void expire(core::Nanos now);
  std::size_t size() const;
  // Permits held per owner (for the gauge), owners holding none left out.
  std::vector<std::pair<std::string, std::int64_t>> held() const;

 private:
  struct Kept {
    local::Lease lease;
    core::Nanos expires;
    std::string owner;
  };
  void forget(std::unordered_map<std::uint64_t, Kept>::iterator it);
  void give_memory_back();

  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Kept> kept_;
  std::multimap<core::Nanos, std::uint64_t> by_expiry_;
  std::unordered_map<std::string, std::int64_t> held_;  // by owner
  std::size_t peak_ = 0;  // the most held since memory was last given back
  std::mt19937_64 ids_;
};

// Tokens of permits held in Redis: "r-<id>-<rule hex>-<key hex>", so any instance sharing the
// store can give the permit back.
std::string remote_lease_token(std::int64_t id, std::string_view rule, std::string_view key);
struct RemoteLeaseToken {
  std::int64_t id = 0;
  std::string rule;
  std::string key;
};
bool parse_remote_lease_token(std::string_view token, RemoteLeaseToken& out);

}  // namespace sluice::engine::detail
