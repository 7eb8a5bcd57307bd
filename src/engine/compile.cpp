// Compiling a RuleSet into a Snapshot (internal.hpp): each rule's limit made real, here or in
// Redis, keeping the tables and counters of what did not change.
#include <string_view>
#include <unordered_map>
#include <variant>

#include "internal.hpp"
#include "rls_tree.hpp"

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

// The old snapshot's routes by name, so each route finds its counters in one lookup.
using OldRoutes = std::unordered_map<std::string_view, const CompiledRoute*>;

OldRoutes old_routes(const Snapshot* old) {
  OldRoutes out;
  if (old == nullptr) return out;
  for (const auto& r : old->routes) out.emplace(r->route.name, r.get());
  return out;
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

// A limit reached only through fixed values has exactly one key: one page holds its bucket.
constexpr std::size_t kOneKeyBudget = 4096;

backend::redis::RemoteLimitOptions rls_remote_options(const config::RuleSet& rules) {
  const config::RlsSettings& rls = *rules.rls;
  const config::RedisRuleOptions d =
      rules.redis ? rules.redis->defaults : config::RedisRuleOptions{};
  backend::redis::RemoteLimitOptions o;
  o.on_failure = backend_policy(rls.on_failure.value_or(d.on_failure));
  o.local_share = rls.local_share.value_or(d.local_share);
  o.lease = rls.lease.value_or(d.lease);
  o.lease_ttl = rls.lease_ttl.value_or(d.lease_ttl);
  return o;
}

// The limit of one configured rate_limit: the old snapshot's when nothing about it changed,
// its table retuned when only the numbers did, else new.
core::Expected<std::unique_ptr<CompiledLimit>> rls_limit(
    const config::RuleSet& rules, const config::RlsDescriptor& d, const std::string& path,
    bool fixed, const RlsDomains* old, const config::RuleSet* old_rules, core::Nanos now) {
  auto limit = std::make_unique<CompiledLimit>();
  limit->name = path;
  limit->rls = CompiledLimit::Rls{*d.rate_limit, d.shadow_mode};
  if (d.rate_limit->unlimited) return limit;
  auto spec = config::rls_limit_spec(*d.rate_limit);
  if (!spec) return core::make_error(spec.error());
  limit->spec = *spec;
  limit->quota = quota_of(*spec);
  const bool redis = rules.rls->storage == config::Storage::kRedis;
  const CompiledLimit* previous = nullptr;
  if (old != nullptr) {
    if (auto it = old->limits.find(path); it != old->limits.end()) previous = it->second.get();
  }
  if (redis) {
    const backend::redis::RemoteLimitOptions options = rls_remote_options(rules);
    if (previous != nullptr && previous->remote && previous->spec.canonical == spec->canonical) {
      const auto& was = previous->remote->options();
      if (was.on_failure == options.on_failure && was.local_share == options.local_share &&
          was.lease == options.lease && was.lease_ttl == options.lease_ttl) {
        limit->remote = previous->remote;  // its local fallback keeps its state
        return limit;
      }
    }
    auto remote = backend::redis::RemoteLimit::make("rls", *spec, options);
    if (!remote) return core::make_error(remote.error());
    limit->remote = *remote;
    return limit;
  }
  const std::size_t budget = fixed ? kOneKeyBudget : rules.rls->memory;
  const std::size_t old_budget =
      old_rules != nullptr && old_rules->rls ? (fixed ? kOneKeyBudget : old_rules->rls->memory) : 0;
  if (previous != nullptr && previous->table && budget == old_budget &&
      previous->spec.params.index() == spec->params.index()) {
    limit->table = *previous->table;
    if (previous->spec.canonical != spec->canonical) {
      std::visit(
          [&](auto& table) {
            using Params = typename std::decay_t<decltype(*table)>::Params;
            table->retune(std::get<Params>(spec->params), now);
          },
          limit->table->table);
      limit->table->spec = *spec;
    }
    return limit;
  }
  auto table = local::make_table_limit(*spec, budget);
  if (!table) return core::make_error(table.error());
  limit->table = *table;
  return limit;
}

core::Expected<std::shared_ptr<const RlsDomains>> compile_rls(const config::RuleSet& rules,
                                                              const Snapshot* old,
                                                              core::Nanos now) {
  if (!rules.rls || rules.rls->domains.empty()) return std::shared_ptr<const RlsDomains>();
  auto out = std::make_shared<RlsDomains>();
  out->redis = rules.rls->storage == config::Storage::kRedis;
  const RlsDomains* old_rls = old != nullptr ? old->rls.get() : nullptr;
  const config::RuleSet* old_rules = old != nullptr ? &old->rules : nullptr;
  for (const config::RlsDomain& domain : rules.rls->domains) {
    const MakeLimit make = [&](const config::RlsDescriptor& d, const std::string& path,
                               bool fixed) -> core::Expected<const CompiledLimit*> {
      auto limit = rls_limit(rules, d, path, fixed, old_rls, old_rules, now);
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
                                                  core::Nanos now) {
  auto snap = std::make_shared<Snapshot>();
  snap->rules = std::move(rules);
  snap->version = old != nullptr ? old->version + 1 : 1;
  std::string errors;
  snap->compiled.reserve(snap->rules.rules.size());
  for (const config::Rule& rule : snap->rules.rules) {
    const CompiledRule* previous = old != nullptr ? old->rule(rule.name) : nullptr;
    if (previous != nullptr && unchanged(*previous, rule, snap->rules, old->rules)) {
      snap->compiled.push_back(old->shared_rule(rule.name));
      continue;
    }
    auto c = compile_rule(rule, old);
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
    snap->routes.push_back(std::move(c));
  }
  auto rls = compile_rls(snap->rules, old, now);
  if (!rls) return core::make_error(rls.error());
  snap->rls = std::move(rls).value();
  return snap;
}

}  // namespace sluice::engine::detail
