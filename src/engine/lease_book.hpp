// Concurrency permits the decision service hands out: a caller that asked "may I start?" on
// a concurrency rule holds a permit until it says it is done (a token) or its time is up.
// Internal to the engine; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sluice/core/time.hpp"
#include "sluice/local/policy.hpp"

namespace sluice::engine::detail {

class LeaseBook {
 public:
  LeaseBook();

  // Keeps `lease` until release(token) or `ttl` after `now`; the token is "l-" + 16 hex digits,
  // not guessable from another's.
  std::string keep(local::Lease lease, core::Nanos now, core::Nanos ttl);
  // False when the token is not one this book holds (never was, released, or expired).
  bool release(std::string_view token);
  // Gives back every permit whose time is up.
  void expire(core::Nanos now);
  std::size_t size() const;

 private:
  struct Kept {
    local::Lease lease;
    core::Nanos expires;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Kept> kept_;
  std::multimap<core::Nanos, std::uint64_t> by_expiry_;
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
