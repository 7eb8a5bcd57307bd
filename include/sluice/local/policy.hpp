// A policy: an ordered list of limits, each with its own key, decided as one request. Either
// all must pass (a denial charges none), or the first that allows decides (global first, then
// per key). Concurrency limits hand back leases that release themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sluice/core/decision.hpp"
#include "sluice/local/table_limit.hpp"

namespace sluice::local {

enum class Combine {
  // Check every limit, commit all only if all allow (nginx's lookup-then-account). The
  // affected slots are held together, so no other thread decides between check and commit.
  kAllMustPass,
  // lua-resty-limit-rate's pattern: while the first (global) limit allows, the request passes
  // and only it is charged; when it is exhausted, the next (per-key) limit decides. A heavy user
  // is throttled only while the service is under pressure.
  kFirstThatAllows,
};

// A concurrency permit held for one key; returned when the Lease is destroyed, on every path
// (normal return, exception, a cancelled request dropping its state). Move-only.
class Lease {
 public:
  Lease(TablePtr<core::Concurrency> table, table::KeyHash key, std::int64_t cost)
      : table_(std::move(table)), key_(key), cost_(cost) {}
  Lease(Lease&&) noexcept = default;
  Lease& operator=(Lease&& other) noexcept {
    if (this != &other) {
      release();
      table_ = std::move(other.table_);
      key_ = other.key_;
      cost_ = other.cost_;
    }
    return *this;
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() { release(); }

  void release();

 private:
  TablePtr<core::Concurrency> table_;
  table::KeyHash key_{};
  std::int64_t cost_ = 0;
};

struct PolicyDecision {
  core::Decision decision;
  std::vector<Lease> leases;  // one per concurrency limit that admitted the request
  int decided_by = -1;        // kFirstThatAllows: index of the limit that allowed
  // Each limit's own decision, by limit index (for response headers and per-rule counters);
  // std::nullopt for a limit that was skipped (empty key) or not reached.
  std::vector<std::optional<core::Decision>> each;
};

// Thread-safe: any number of threads may decide at once.
class Policy {
 public:
  Policy(Combine combine, std::vector<TableLimit> limits);

  // keys[i] is the key of limits()[i]; an empty key skips that limit (nginx: "not accounted").
  PolicyDecision decide(std::span<const std::string_view> keys, core::Nanos now, std::int64_t cost,
                        core::Nanos max_wait);
  // The same with each limit's own max-wait (a rule that rejects at once beside one that
  // delays): max_waits[i] applies to limits()[i].
  PolicyDecision decide(std::span<const std::string_view> keys, core::Nanos now, std::int64_t cost,
                        std::span<const core::Nanos> max_waits);

  const std::vector<TableLimit>& limits() const { return limits_; }
  Combine combine() const { return combine_; }

 private:
  PolicyDecision all_must_pass(std::span<const std::string_view> keys, core::Nanos now,
                               std::int64_t cost, std::span<const core::Nanos> max_waits);
  PolicyDecision first_that_allows(std::span<const std::string_view> keys, core::Nanos now,
                                   std::int64_t cost, std::span<const core::Nanos> max_waits);

  Combine combine_;
  std::vector<TableLimit> limits_;
};

}  // namespace sluice::local
