// Several limits decided as one request: either all must pass (a denial charges none), or the
// first that allows decides (global first, then per key). Concurrency limits hand back leases
// that release themselves. Nothing here allocates for up to kInline limits.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
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

// Limits a request usually meets at once: below this, deciding allocates nothing.
inline constexpr std::size_t kInline = 8;

using Leases = absl::InlinedVector<Lease, 2>;
using EachDecision = std::optional<core::Decision>;  // nullopt: skipped or not reached

// One limit of one request: the limit's table, the key's hash, and how long this limit may
// make the request wait. `skip`: the key is missing, the limit is not accounted (nginx).
struct LimitAsk {
  const AnyTable* table = nullptr;
  table::KeyHash key{};
  core::Nanos max_wait = 0;
  bool skip = false;
  // Added to `now` for this limit alone: a calendar window decides on Unix time, beside
  // limits that decide on the steady clock.
  core::Nanos shift = 0;
  // A refused request is charged to this limit as if admitted (a rule's count_denied).
  bool count_denied = false;
  // What this limit charges, when not the request's cost (a rule's reserve); 0: the cost.
  std::int64_t cost = 0;
};

// All must pass. Each table may appear once. The slots are locked in one global order (by
// table), blocking, so two requests over the same limits in any order neither deadlock nor
// give up: a busy slot only makes a request wait its turn. each[i] gets asks[i]'s own
// decision. A key that finds its bucket full of leases is denied by its limit.
core::Decision decide_all(std::span<const LimitAsk> asks, core::Nanos now, std::int64_t cost,
                          std::span<EachDecision> each, Leases& leases);

// The first that allows decides and only it is charged; `decided_by` is its index (-1 when
// none allows). A denial's retry_after is the soonest any of them would allow.
core::Decision decide_first(std::span<const LimitAsk> asks, core::Nanos now, std::int64_t cost,
                            std::span<EachDecision> each, Leases& leases, int& decided_by);

struct PolicyDecision {
  core::Decision decision;
  Leases leases;        // one per concurrency limit that admitted the request
  int decided_by = -1;  // kFirstThatAllows: index of the limit that allowed
  // Each limit's own decision, by limit index (for response headers and per-rule counters).
  absl::InlinedVector<EachDecision, kInline> each;
};

// A fixed list of limits decided by key text. Thread-safe: any number of threads may decide
// at once.
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
  Combine combine_;
  std::vector<TableLimit> limits_;
};

}  // namespace sluice::local
