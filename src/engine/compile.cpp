// Compiling a RuleSet into a Snapshot (internal.hpp): each rule's limit made real, here or in
// Redis, keeping the tables and counters of what did not change.
#include <string_view>
#include <unordered_map>
#include <variant>

#include "adaptive_gate.hpp"
#include "event_tally.hpp"
#include "internal.hpp"
#include "limit_factory.hpp"
#include "rls_tree.hpp"
#include "route_breaker.hpp"
#include "sluice/backend/redis/block_list.hpp"
#include "sluice/config/shared_overrides.hpp"
#include "top_sketch.hpp"

namespace sluice::engine::detail {
namespace {

// Where a rule's state lives: its table of `memory`, or Redis with its own options.
Placement placement_of(const config::RuleSet& rules, const config::Rule& rule,
                       const core::Clock* wall) {
  if (rules.storage_of(rule) != config::Storage::kRedis) {
    return {rules.memory, std::nullopt, {}, wall};
  }
  auto remote = remote_options(rules.redis_options_of(rule), rule.permit_ttl);
  remote.count_denied = rule.count_denied;
  remote.block = rule.block.value_or(0);
  if (rule.block) remote.block_list = backend::redis::block_list_key(rule.name);
  return {rules.memory, std::move(remote), {}, wall};
}

// The old snapshot's routes by name, so each route finds its counters in one lookup.
using OldRoutes = std::unordered_map<std::string_view, const CompiledRoute*>;

OldRoutes old_routes(const Snapshot* old) {
  OldRoutes out;
  if (old == nullptr) return out;
  for (const auto& r : old->routes) out.emplace(r->route.name, r.get());
  return out;
}

// The route's adaptive limit: the old one while its block is as it was (its limit, what it
// has learned and the permits it handed out carry over), else a new one.
core::Expected<std::shared_ptr<AdaptiveGate>> adaptive_gate(const OldRoutes& old,
                                                            const config::Route& route,
                                                            core::Nanos now) {
  if (auto it = old.find(route.name);
      it != old.end() && it->second->gate && it->second->gate->config() == *route.adaptive) {
    return it->second->gate;
  }
  auto limit = make_adaptive_limit(*route.adaptive, now, std::hash<std::string>{}(route.name));
  if (!limit) return core::make_error("adaptive_concurrency: " + limit.error());
  return std::make_shared<AdaptiveGate>(*route.adaptive, std::move(limit).value());
}

std::shared_ptr<RuleCounters> route_counters(const OldRoutes& old, std::string_view route,
                                             std::string_view rule) {
  if (auto it = old.find(route); it != old.end()) {
    for (const auto* list : {&it->second->enforce, &it->second->dry_run}) {
      for (const RouteRule& rr : *list) {
        if (rr.rule->rule.name == rule) return rr.counters;
      }
    }
  }
  return std::make_shared<RuleCounters>();
}

// Whether the old snapshot's compiled rule serves the new one as it is: the same rule, kept
// where it was kept, with the same budget or Redis form. An admin change to one rule of 10,000
// then compiles one rule.
bool unchanged(const CompiledRule& previous, const config::Rule& rule, const config::RuleSet& rules,
               const config::RuleSet& old_rules) {
  if (!(previous.rule == rule)) return false;
  const config::Storage storage = rules.storage_of(rule);
  if (storage != old_rules.storage_of(previous.rule)) return false;
  if (storage == config::Storage::kRedis) {
    return previous.limit.remote != nullptr &&
           rules.redis_options_of(rule) == old_rules.redis_options_of(previous.rule);
  }
  return previous.limit.table.has_value() && rules.memory == old_rules.memory;
}

using Variants = std::map<std::string, CompiledLimit, std::less<>>;

// A rule's tiers or overrides, each a limit of its own made as the rule's is, kept or retuned
// from the previous limit of the same tier or key. In Redis each tier is a limit of its own
// name; the overrides share one (their keys are apart).
core::Expected<Variants> compile_variants(const config::RuleSet& rules, const config::Rule& rule,
                                          const std::vector<config::LimitVariant>& variants,
                                          std::string_view suffix, const Variants* previous,
                                          core::Nanos now, const core::Clock* wall) {
  Variants out;
  const bool per_name = suffix.ends_with('/');
  for (const config::LimitVariant& v : variants) {
    if (per_name && v.name == config::kDefaultTier) continue;  // the rule's own limit
    Placement where = placement_of(rules, rule, wall);
    where.redis_name = rule.name + std::string(suffix) + (per_name ? v.name : std::string());
    // A tier's blocks are the tier limit's own keys, which GET/DELETE .../blocks/{key} (that
    // know the key, not its tier) do not reach: not listed either.
    if (per_name && where.redis) where.redis->block_list.clear();
    const CompiledLimit* before = nullptr;
    if (previous != nullptr) {
      if (auto it = previous->find(v.name); it != previous->end()) before = &it->second;
    }
    auto limit = make_limit(rule.name, v.limit, where, before, now, rule.on_change);
    if (!limit)
      return core::make_error(std::string(per_name ? "tier '" : "override '") + v.name +
                              "': " + limit.error());
    out.emplace(v.name, std::move(limit).value());
  }
  return out;
}

core::Expected<std::unique_ptr<CompiledRule>> compile_rule(
    const config::RuleSet& rules, const config::Rule& rule, const CompiledRule* previous,
    const std::shared_ptr<TopBudget>& budget, core::Nanos now, const core::Clock* wall) {
  auto limit = make_limit(rule.name, rule.limit, placement_of(rules, rule, wall),
                          previous != nullptr ? &previous->limit : nullptr, now, rule.on_change);
  if (!limit) return core::make_error(limit.error());
  auto c = std::make_unique<CompiledRule>();
  c->rule = rule;
  c->limit = std::move(limit).value();
  if (rule.block && c->limit.table) {
    c->limit.blocks = previous != nullptr && previous->limit.blocks
                          ? previous->limit.blocks
                          : std::make_shared<BlockTable>();
  }
  c->limit.top = previous != nullptr && previous->limit.top ? previous->limit.top
                                                            : std::make_shared<TopSlot>(budget);
  if (rule.action == config::Action::kDryRun) {
    c->limit.dry_run_denials = previous != nullptr && previous->limit.dry_run_denials
                                   ? previous->limit.dry_run_denials
                                   : std::make_shared<EventTally>();
  }
  auto tiers = compile_variants(rules, rule, rule.tiers, "/tier/",
                                previous != nullptr ? &previous->tiers : nullptr, now, wall);
  if (!tiers) return core::make_error(tiers.error());
  c->tiers = std::move(tiers).value();
  auto overrides =
      compile_variants(rules, rule, config::overrides_in_force(rule), "/override",
                       previous != nullptr ? &previous->overrides : nullptr, now, wall);
  if (!overrides) return core::make_error(overrides.error());
  c->overrides = std::move(overrides).value();
  // A key blocked is blocked whichever limit it is charged against; its requests and
  // refusals are the rule's, in its top keys and its dry-run tally.
  for (auto* m : {&c->tiers, &c->overrides}) {
    for (auto& [name, l] : *m) {
      l.blocks = c->limit.blocks;
      l.top = c->limit.top;
      l.dry_run_denials = c->limit.dry_run_denials;
    }
  }
  c->check_counters = previous != nullptr ? previous->check_counters
                                          : std::make_shared<std::array<RuleCounters, kVias>>();
  return c;
}

// A limit reached only through fixed values has exactly one key: one page holds its bucket.
constexpr std::size_t kOneKeyBudget = 4096;

// The limit of one configured rate_limit, made as every limit is (kept, retuned or new).
core::Expected<std::unique_ptr<CompiledLimit>> rls_limit(const config::RuleSet& rules,
                                                         const config::RlsDescriptor& d,
                                                         const std::string& path, bool fixed,
                                                         const RlsDomains* old, core::Nanos now) {
  const CompiledLimit* previous = nullptr;
  if (old != nullptr) {
    if (auto it = old->limits.find(path); it != old->limits.end()) previous = it->second.get();
  }
  CompiledLimit::Rls rls{*d.rate_limit, d.shadow_mode};
  if (previous != nullptr && previous->rls) rls.counters = previous->rls->counters;
  if (d.rate_limit->unlimited) {
    auto limit = std::make_unique<CompiledLimit>();
    limit->name = path;
    limit->rls = rls;
    return limit;
  }
  auto spec = config::rls_limit_spec(*d.rate_limit);
  if (!spec) return core::make_error(spec.error());
  Placement where{fixed ? kOneKeyBudget : rules.rls->memory, std::nullopt, "rls"};
  if (rules.rls->storage == config::Storage::kRedis) {
    where.redis = remote_options(rules.rls_redis_options());
  }
  auto limit = make_limit(path, *spec, where, previous, now);
  if (!limit) return core::make_error(limit.error());
  auto made = std::make_unique<CompiledLimit>(std::move(limit).value());
  made->rls = rls;
  return made;
}

core::Expected<std::shared_ptr<const RlsDomains>> compile_rls(const config::RuleSet& rules,
                                                              const Snapshot* old,
                                                              core::Nanos now) {
  if (!rules.rls || rules.rls->domains.empty()) return std::shared_ptr<const RlsDomains>();
  auto out = std::make_shared<RlsDomains>();
  out->redis = rules.rls->storage == config::Storage::kRedis;
  const RlsDomains* old_rls = old != nullptr ? old->rls.get() : nullptr;
  for (const config::RlsDomain& domain : rules.rls->domains) {
    const MakeLimit make = [&](const config::RlsDescriptor& d, const std::string& path,
                               bool fixed) -> core::Expected<const CompiledLimit*> {
      auto limit = rls_limit(rules, d, path, fixed, old_rls, now);
      if (!limit) return core::make_error(limit.error());
      return out->limits.insert_or_assign(path, std::move(limit).value()).first->second.get();
    };
    auto tree = RlsTree::build(domain, make);
    if (!tree) {
      return core::make_error((domain.file.empty() ? std::string() : domain.file + ": ") +
                              "domain '" + domain.name + "': " + tree.error());
    }
    out->domains.insert_or_assign(domain.name, std::move(tree).value());
  }
  return std::shared_ptr<const RlsDomains>(std::move(out));
}

}  // namespace

core::Expected<std::shared_ptr<Snapshot>> compile(config::RuleSet rules, const Snapshot* old,
                                                  core::Nanos now, const core::Clock* wall) {
  auto snap = std::make_shared<Snapshot>();
  snap->rules = std::move(rules);
  snap->version = old != nullptr ? old->version + 1 : 1;
  snap->top_budget =
      old != nullptr ? old->top_budget : std::make_shared<TopBudget>(TopKeys::kMaxRules);
  std::string errors;
  snap->compiled.reserve(snap->rules.rules.size());
  for (const config::Rule& rule : snap->rules.rules) {
    const CompiledRule* previous = old != nullptr ? old->rule(rule.name) : nullptr;
    if (previous != nullptr && unchanged(*previous, rule, snap->rules, old->rules)) {
      snap->compiled.push_back(old->shared_rule(rule.name));
      continue;
    }
    auto c = compile_rule(snap->rules, rule, previous, snap->top_budget, now, wall);
    if (!c) {
      errors += "rule '" + rule.name + "': " + c.error() + "\n";
      continue;
    }
    snap->compiled.push_back(std::move(c).value());
  }
  if (!errors.empty()) return core::make_error(errors);
  snap->by_name.reserve(snap->compiled.size());
  for (std::size_t i = 0; i < snap->compiled.size(); ++i) {
    snap->by_name.emplace(snap->compiled[i]->rule.name, i);
  }

  const OldRoutes routes_before = old_routes(old);
  for (const config::Route& route : snap->rules.routes) {
    auto c = std::make_unique<CompiledRoute>();
    c->route = route;
    c->upstream = route.upstream.empty() ? nullptr : snap->rules.upstream(route.upstream);
    for (const auto& name : route.rules) {
      const CompiledRule* rule = snap->rule(name);
      RouteRule rr{rule, route_counters(routes_before, route.name, name)};
      if (rule->rule.action == config::Action::kDryRun) {
        c->dry_run.push_back(std::move(rr));
      } else {
        c->any_in_redis = c->any_in_redis || rule->limit.in_redis();
        c->enforce.push_back(std::move(rr));
      }
    }
    if (route.adaptive) {
      auto gate = adaptive_gate(routes_before, route, now);
      if (!gate) return core::make_error("route '" + route.name + "': " + gate.error());
      c->gate = std::move(gate).value();
    }
    snap->routes.push_back(std::move(c));
  }
  attach_breakers(*snap, old);
  auto rls = compile_rls(snap->rules, old, now);
  if (!rls) return core::make_error(rls.error());
  snap->rls = std::move(rls).value();
  return snap;
}

}  // namespace sluice::engine::detail
