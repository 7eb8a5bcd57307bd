// The one place that decides: a compiled config (Snapshot) that every frontend asks "what do
// I do with this?", swapped atomically on reload while the state of unchanged limits is kept.
// Frontends reach it through a Loop (loop.hpp), which completes Redis rules on their event
// loop; Engine::decide alone answers Redis rules by their failure policy (tests, embedding).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/backend/redis/query.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/engine/snapshot.hpp"
#include "sluice/metrics/registry.hpp"
#include "sluice/support/shared_slot.hpp"
#include "sluice/table/keyed_table.hpp"

namespace sluice::engine {

namespace detail {
class LeaseBook;
}

enum class Progress {
  kDone,     // `out` is complete
  kPending,  // `out` waits for Redis: Loop::async_complete finishes it
};

// Thread-safe: any number of event loops decide while apply() swaps configs.
class Engine {
 public:
  // Throws std::invalid_argument with the errors when `rules` is invalid.
  Engine(config::RuleSet rules, core::Nanos now);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates `rules` in full; on any error returns them and changes nothing. Otherwise swaps
  // it in: limits whose rule name and spec are unchanged keep their tables; a rule whose
  // limit changed only in rate/burst/etc. (same algorithm, same memory) keeps its keys'
  // state and retunes them; others start empty. Asks in flight keep their snapshot.
  std::vector<std::string> apply(config::RuleSet rules, core::Nanos now);
  // As apply(), for rules the caller has just checked with config::validate (the config store
  // does, to report each error at its line), so the checks do not run twice.
  std::vector<std::string> apply_validated(config::RuleSet rules, core::Nanos now);

  std::shared_ptr<const Snapshot> snapshot() const { return current_.load(); }
  // The rules in force (they live as long as the pointer is held).
  std::shared_ptr<const config::RuleSet> rules() const {
    auto snap = current_.load();
    return std::shared_ptr<const config::RuleSet>(snap, &snap->rules);
  }
  // Changes with every apply(): a loop compares it to know its cached snapshot is stale.
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Decides `ask` at `now` against `snap` into `out` (reset first). kPending: the limits kept
  // in Redis are still to be asked; finish() completes `out` with the answer.
  Progress start(std::shared_ptr<const Snapshot> snap, const Ask& ask, core::Nanos now,
                 Outcome& out);
  // `answers`: one per query the outcome asked (Loop does this).
  void finish(Outcome& out, std::vector<backend::redis::Answer> answers);

  // start() and, for Redis limits, each rule's failure policy (no store to ask).
  void decide(const Ask& ask, core::Nanos now, Outcome& out);

  // Gives back a concurrency permit the decision service handed out (Outcome::lease_token).
  // False when the token is unknown or already expired. Permits held in Redis go back
  // through Loop::release_lease.
  bool release_lease(std::string_view token);
  // Returns the permits whose time is up (called by a loop's timer, about once a second).
  void expire_leases(core::Nanos now);

  // Rule counters and table occupancy, per rule and route, in `registry`.
  [[nodiscard]] metrics::Registry::Registration register_metrics(metrics::Registry& registry);

  // CL.THROTTLE's local table (the keys held, for INFO and metrics).
  table::TableStats throttle_stats() const { return throttle_->stats(); }

  static constexpr std::size_t kMaxInlineLimits = 256;
  // Distinct RLS limit overrides kept at most (each has its own table), as envoyproxy's.
  static constexpr std::size_t kMaxRlsOverrides = 32;

 private:
  const CompiledLimit* inline_limit(std::string_view spec, std::size_t memory, Outcome& out);
  Progress start_throttle(const Snapshot& snap, const ThrottleAsk& ask, core::Nanos now,
                          Outcome& out);
  const CompiledLimit* throttle_limit(const Snapshot& snap, const ThrottleAsk& ask,
                                      const core::Gcra::Params& params, Outcome& out);
  Progress start_rls(const Snapshot& snap, const RlsAsk& ask, core::Nanos now, Outcome& out);
  // The limits that apply to each descriptor, into out.applied. False when the decision is
  // already made: a refused ask (out.verdict kInvalid) or a domain no rule knows (allowed).
  bool resolve_rls(const Snapshot& snap, const RlsAsk& ask, Outcome& out);
  // A descriptor's own limit (made at its first use, kept for every later request with it).
  const CompiledLimit* rls_override(const Snapshot& snap, const RlsOverride& o, std::size_t index,
                                    Outcome& out);

  // The loops read it only when version_ moves (Loop::snapshot): its lock is off the hot path.
  support::SharedSlot<Snapshot> current_;
  std::atomic<std::uint64_t> version_{0};
  std::mutex apply_mutex_;
  std::mutex inline_mutex_;
  std::map<std::string, std::unique_ptr<CompiledLimit>, std::less<>> inline_;
  // CL.THROTTLE: one TAT per key, whatever the parameters each call brings (redis-cell).
  std::unique_ptr<table::KeyedTable<core::Gcra>> throttle_;
  std::mutex throttle_mutex_;  // throttle_remote_
  std::map<std::string, std::unique_ptr<CompiledLimit>, std::less<>> throttle_remote_;
  std::unique_ptr<detail::LeaseBook> leases_;
  std::mutex rls_mutex_;  // rls_overrides_
  std::map<std::string, std::unique_ptr<CompiledLimit>, std::less<>> rls_overrides_;
};

}  // namespace sluice::engine
