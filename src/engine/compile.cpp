// Compiling a RuleSet into a Snapshot (internal.hpp): each rule's limit made real, here or in
// Redis, keeping the tables and counters of what did not change.
#include <variant>

#include "internal.hpp"

namespace sluice::engine::detail {
namespace {

// The table of a rule in the new snapshot: the old one as it is (same limit), the old one
// retuned (same algorithm and memory, other parameters: every key keeps its state), or new.
core::Expected<local::TableLimit> table_for(const config::Rule& rule, const CompiledRule* old,
                                            std::size_t memory, std::size_t old_memory,
                                            core::Nanos now) {
  if (old != nullptr && old->limit.table && memory == old_memory &&
      old->rule.limit.params.index() == rule.limit.params.index()) {
    local::TableLimit kept = *old->limit.table;
    if (old->rule.limit.canonical != rule.limit.canonical) {
      std::visit(
          [&](auto& table) {
            using Params = typename std::decay_t<decltype(*table)>::Params;
            table->retune(std::get<Params>(rule.limit.params), now);
          },
          kept.table);
      kept.spec = rule.limit;
    }
    return kept;
  }
  return local::make_table_limit(rule.limit, memory);
}

}  // namespace

backend::redis::FailurePolicy backend_policy(config::FailurePolicy p) {
  switch (p) {
    case config::FailurePolicy::kOpen:
      return backend::redis::FailurePolicy::kOpen;
    case config::FailurePolicy::kClosed:
      return backend::redis::FailurePolicy::kClosed;
    case config::FailurePolicy::kLocal:
      return backend::redis::FailurePolicy::kLocal;
  }
  return backend::redis::FailurePolicy::kOpen;
}

namespace {

// The Redis form of a rule: the previous one when nothing about it changed (its local
// fallback keeps its state), else a new one.
core::Expected<std::shared_ptr<const backend::redis::RemoteLimit>> remote_for(
    const config::RuleSet& rules, const config::Rule& rule, const CompiledRule* old,
    const config::RuleSet* old_rules) {
  const config::RedisRuleOptions o = rules.redis_options_of(rule);
  if (old != nullptr && old->limit.remote && old_rules != nullptr &&
      old->rule.limit.canonical == rule.limit.canonical &&
      old_rules->redis_options_of(old->rule) == o) {
    return old->limit.remote;
  }
  backend::redis::RemoteLimitOptions options;
  options.on_failure = backend_policy(o.on_failure);
  options.local_share = o.local_share;
  options.lease = o.lease;
  options.lease_ttl = o.lease_ttl;
  options.concurrency_lease_ttl = rule.permit_ttl;
  return backend::redis::RemoteLimit::make(rule.name, rule.limit, options);
}

std::shared_ptr<RuleCounters> route_counters(const Snapshot* old, std::string_view route,
                                             std::string_view rule) {
  if (old != nullptr) {
    for (const auto& r : old->routes) {
      if (r->route.name != route) continue;
      for (const auto* list : {&r->enforce, &r->dry_run}) {
        for (const RouteRule& rr : *list) {
          if (rr.rule->rule.name == rule) return rr.counters;
        }
      }
    }
  }
  return std::make_shared<RuleCounters>();
}

std::unique_ptr<CompiledRule> compile_rule(const config::Rule& rule, const Snapshot* old) {
  const CompiledRule* previous = old != nullptr ? old->rule(rule.name) : nullptr;
  auto c = std::make_unique<CompiledRule>();
  c->rule = rule;
  c->limit.name = rule.name;
  c->limit.spec = rule.limit;
  c->limit.quota = quota_of(rule.limit);
  c->check_counters =
      previous != nullptr ? previous->check_counters : std::make_shared<RuleCounters>();
  return c;
}

}  // namespace

core::Expected<std::shared_ptr<Snapshot>> compile(config::RuleSet rules, const Snapshot* old,
                                                  core::Nanos now) {
  auto snap = std::make_shared<Snapshot>();
  snap->rules = std::move(rules);
  snap->version = old != nullptr ? old->version + 1 : 1;
  std::string errors;
  for (const config::Rule& rule : snap->rules.rules) {
    auto c = compile_rule(rule, old);
    const CompiledRule* previous = old != nullptr ? old->rule(rule.name) : nullptr;
    if (snap->rules.storage_of(rule) == config::Storage::kRedis) {
      auto remote = remote_for(snap->rules, rule, previous, old != nullptr ? &old->rules : nullptr);
      if (!remote) {
        errors += "rule '" + rule.name + "': " + remote.error() + "\n";
        continue;
      }
      c->limit.remote = *remote;
    } else {
      auto table = table_for(rule, previous, snap->rules.memory,
                             old != nullptr ? old->rules.memory : 0, now);
      if (!table) {
        errors += "rule '" + rule.name + "': " + table.error() + "\n";
        continue;
      }
      c->limit.table = *table;
    }
    snap->compiled.push_back(std::move(c));
  }
  if (!errors.empty()) return core::make_error(errors);
  for (const auto& c : snap->compiled) snap->by_name.emplace(c->rule.name, c.get());

  for (const config::Route& route : snap->rules.routes) {
    auto c = std::make_unique<CompiledRoute>();
    c->route = route;
    c->upstream = route.upstream.empty() ? nullptr : snap->rules.upstream(route.upstream);
    for (const auto& name : route.rules) {
      const CompiledRule* rule = snap->rule(name);
      RouteRule rr{rule, route_counters(old, route.name, name)};
      if (rule->rule.action == config::Action::kDryRun) {
        c->dry_run.push_back(std::move(rr));
      } else {
        c->any_in_redis = c->any_in_redis || rule->limit.in_redis();
        c->enforce.push_back(std::move(rr));
      }
    }
    snap->routes.push_back(std::move(c));
  }
  return snap;
}

}  // namespace sluice::engine::detail
