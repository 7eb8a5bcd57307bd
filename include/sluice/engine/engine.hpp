// The one place that decides: a compiled config that every frontend asks "what do I do with
// this?", swapped atomically on reload while the state of unchanged limits is kept. Frontends
// decide through a Loop (loop.hpp), which completes Redis rules on their event loop; this face
// holds no table, store or snapshot (they are the engine's own, src/engine/engine_state.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/engine/top_keys.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::engine {

namespace detail {
class EngineState;
}

// How full a table is, for INFO and metrics.
struct TableUse {
  std::size_t keys = 0;
  std::size_t capacity = 0;
  std::uint64_t evictions = 0;
  std::size_t memory_bytes = 0;
};

// Thread-safe: any number of event loops decide while apply() swaps configs.
class Engine {
 public:
  // Throws std::invalid_argument with the errors when `rules` is invalid.
  // `wall`: the Unix time calendar windows (fixed-window align=calendar) decide on, beside the
  // steady `now` of every decision; null: `now` is taken as Unix time (tests, replays).
  Engine(config::RuleSet rules, core::Nanos now, const core::Clock* wall = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates `rules` in full; on any error returns them and changes nothing. Otherwise swaps
  // it in: limits whose rule name and spec are unchanged keep their tables; a rule whose
  // limit changed only in rate/burst/etc. (same algorithm, same memory) keeps its keys'
  // state and retunes them; others start empty. Asks in flight keep their rules.
  std::vector<std::string> apply(config::RuleSet rules, core::Nanos now);
  // As apply(), for rules the caller has just checked with config::validate (the config store
  // does, to report each error at its line), so the checks do not run twice.
  std::vector<std::string> apply_validated(config::RuleSet rules, core::Nanos now);

  // The rules in force (they live as long as the pointer is held).
  std::shared_ptr<const config::RuleSet> rules() const;
  // Changes with every apply(): a loop compares it to know its cached rules are stale.
  std::uint64_t version() const;

  // Decides `ask` at `now` into `out`, answering the limits kept in Redis by their failure
  // policies (no store is asked): for tests and embedding. Frontends use Loop::decide.
  void decide(const Ask& ask, core::Nanos now, Outcome& out);

  // Gives back a concurrency permit the decision service handed out (Outcome::lease_token).
  // False when the token is unknown or already expired. Permits held in Redis go back
  // through Loop::release_lease.
  bool release_lease(std::string_view token);
  // Returns the permits whose time is up (called by a timer, about once a second).
  void expire_leases(core::Nanos now);

  // Rule counters, table occupancy and held permits, per rule and route, in `registry`.
  [[nodiscard]] metrics::Registry::Registration register_metrics(metrics::Registry& registry);

  // The `n` keys rule `rule` met most by `by` over the TopKeys::kWindowSeconds up to `now`
  // (raw, or hashed under log_key: hash). nullopt: no rule of that name.
  std::optional<TopKeys> top_keys(std::string_view rule, TopBy by, std::size_t n,
                                  core::Nanos now) const;

  // Each dry-run rule's would-be refusals since the previous call, with the latest one's key
  // (raw, cut to TopKeys::kKeyBytes, or hashed under log_key: hash) and route (empty for the
  // check API's): f once for each rule that has some. For the server log's line a second.
  struct DryRunDenials {
    std::string_view rule;
    std::uint64_t count = 0;
    std::string key;
    std::string route;
  };
  void take_dry_run_denials(const std::function<void(const DryRunDenials&)>& f);

  // CL.THROTTLE's local table (the keys held, for INFO and metrics).
  TableUse throttle_use() const;

  static constexpr std::size_t kMaxInlineLimits = 256;
  // Distinct RLS limit overrides kept at most (each has its own table), as envoyproxy's.
  static constexpr std::size_t kMaxRlsOverrides = 32;

  // The engine's own, for its loops and deciders.
  detail::EngineState& state() { return *state_; }

 private:
  std::unique_ptr<detail::EngineState> state_;
};

}  // namespace sluice::engine
