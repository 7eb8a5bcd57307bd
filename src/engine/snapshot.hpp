// A compiled config: every limit made real (its table here or its form in Redis), every route
// with its rules in order, the counters of each. The engine swaps whole snapshots on reload;
// a request keeps the one it started with.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "block_table.hpp"
#include "sluice/backend/redis/remote_limit.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/engine/quota.hpp"
#include "sluice/local/table_limit.hpp"

namespace sluice::engine {

namespace detail {
class TopSlot;  // top_sketch.hpp
class TopBudget;
class EventTally;  // event_tally.hpp
}  // namespace detail

// Counters of one rule on one route (the Prometheus labels rule= and route=). Each request a
// rule takes part in is counted once, under one outcome.
struct RuleCounters {
  std::atomic<std::uint64_t> allowed{0};
  std::atomic<std::uint64_t> denied{0};
  std::atomic<std::uint64_t> delayed{0};  // allowed after a wait (also counted as allowed)
  std::atomic<std::uint64_t> dry_run_denied{0};
  std::atomic<std::uint64_t> missing_key{0};
  // Responses settled by a rule's cost_from or count_if (engine/settle.hpp), by what was
  // charged: the cost the upstream stated, the reserve (no usable stated cost), or nothing
  // (count_if did not list the status).
  std::atomic<std::uint64_t> settled_stated{0};
  std::atomic<std::uint64_t> settled_reserve{0};
  std::atomic<std::uint64_t> settled_nothing{0};
  // Settlements of a rule kept in Redis that did not reach it (Redis down, slow, the breaker
  // open): what admission reserved stands for them.
  std::atomic<std::uint64_t> settled_lost{0};
};

// One limit made real: decided here (`table`) or in Redis (`remote`); neither for an RLS
// limit that is `unlimited`.
struct CompiledLimit {
  std::string name;  // the rule's name, the RLS limit's, or an inline limit's canonical spec
  spec::LimitSpec spec;
  Quota quota;
  std::optional<local::TableLimit> table;
  std::size_t memory = 0;  // the table's budget
  std::shared_ptr<const backend::redis::RemoteLimit> remote;
  // A local rule's on_deny block: the keys banned now (kept across reloads of the rule).
  std::shared_ptr<detail::BlockTable> blocks;
  // An RLS limit: its rate_limit as configured (what a status reports) and its shadow mode.
  struct Rls {
    config::RlsRateLimit rate;
    bool shadow = false;
    std::shared_ptr<RuleCounters> counters = std::make_shared<RuleCounters>();  // kept on reload
  };
  std::optional<Rls> rls;
  // A configured rule's top keys by requests and denials (kept across reloads of the rule).
  std::shared_ptr<detail::TopSlot> top;
  // A dry-run rule's would-be refusals, for the server log's line a second (kept on reload).
  std::shared_ptr<detail::EventTally> dry_run_denials;

  // A calendar window's clock of Unix time (null: decisions' `now` is Unix time already).
  const core::Clock* wall = nullptr;

  bool in_redis() const { return remote != nullptr; }
  // What to add to a decision's `now` (steady) for this limit's own time line.
  core::Nanos shift(core::Nanos now) const { return wall != nullptr ? wall->now() - now : 0; }
  bool unlimited() const { return !table && !remote; }
};

struct CompiledRule {
  config::Rule rule;
  CompiledLimit limit;  // the rule's own: its `limit`, or its tier `default`
  // Its tiers' and overrides' limits, each with its own table, by tier name and by key.
  std::map<std::string, CompiledLimit, std::less<>> tiers;
  std::map<std::string, CompiledLimit, std::less<>> overrides;
  // The decision service's use, by the frontend that asks (Via: check API, SLUICE.CHECK).
  std::shared_ptr<std::array<RuleCounters, kVias>> check_counters;

  core::Nanos max_wait() const { return rule.action == config::Action::kDelay ? rule.max_wait : 0; }

  // The limit `key` is charged against: its override, else its tier's (nullopt: the request
  // names none, or is not trusted to), else the rule's own.
  const CompiledLimit& limit_for(std::string_view key, std::optional<std::string_view> tier) const {
    if (!overrides.empty()) {
      if (auto it = overrides.find(key); it != overrides.end()) return it->second;
    }
    if (tier && !tiers.empty()) {
      if (auto it = tiers.find(*tier); it != tiers.end()) return it->second;
    }
    return limit;
  }
  bool has_variants() const { return !tiers.empty() || !overrides.empty(); }
};

namespace detail {
class RouteBreaker;  // route_breaker.hpp
class StaleCache;    // stale_cache.hpp
}  // namespace detail

struct RouteRule {
  const CompiledRule* rule = nullptr;
  std::shared_ptr<RuleCounters> counters;
};

namespace detail {
class AdaptiveGate;  // adaptive_gate.hpp
}

struct CompiledRoute {
  config::Route route;
  const config::Upstream* upstream = nullptr;     // null when the route responds locally
  std::vector<RouteRule> enforce;                 // reject and delay rules, in route order
  std::vector<RouteRule> dry_run;                 // decided and counted, never enforced
  bool any_in_redis = false;                      // an enforce rule is kept in Redis
  std::shared_ptr<detail::RouteBreaker> breaker;  // `breaker:`; null without
  // route.adaptive made real; kept across reloads that leave the route's block as it was.
  std::shared_ptr<detail::AdaptiveGate> gate;
};

namespace detail {
struct RlsDomains;  // the compiled descriptor trees, by domain (rls_tree.hpp)
}

struct Snapshot {
  config::RuleSet rules;
  // Shared with the next snapshot when a reload leaves the rule (and where it lives) as it was.
  std::vector<std::shared_ptr<const CompiledRule>> compiled;
  std::unordered_map<std::string_view, std::size_t> by_name;  // index in `compiled`
  std::vector<std::unique_ptr<CompiledRoute>> routes;
  std::shared_ptr<const detail::RlsDomains> rls;  // null without `rls:` domains
  std::shared_ptr<detail::StaleCache> stale;      // null unless a route has `fallback: stale`
  std::uint64_t version = 0;
  std::shared_ptr<detail::TopBudget> top_budget;  // the rules' top keys (the same on reload)

  const CompiledRule* rule(std::string_view name) const {
    const auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : compiled[it->second].get();
  }
  std::shared_ptr<const CompiledRule> shared_rule(std::string_view name) const {
    const auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : compiled[it->second];
  }
};

}  // namespace sluice::engine
