// make_limit and LazyLimits (limit_factory.hpp).
#include "limit_factory.hpp"

#include <map>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/engine/quota.hpp"

namespace sluice::engine::detail {
namespace {

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

backend::redis::OnChange backend_on_change(config::OnChange c) {
  switch (c) {
    case config::OnChange::kKeep:
      return backend::redis::OnChange::kKeep;
    case config::OnChange::kReset:
      return backend::redis::OnChange::kReset;
    case config::OnChange::kProportional:
      return backend::redis::OnChange::kProportional;
  }
  return backend::redis::OnChange::kKeep;
}

bool same_options(const backend::redis::RemoteLimitOptions& a,
                  const backend::redis::RemoteLimitOptions& b) {
  return a.on_failure == b.on_failure && a.local_share == b.local_share && a.lease == b.lease &&
         a.lease_ttl == b.lease_ttl && a.concurrency_lease_ttl == b.concurrency_lease_ttl &&
         a.fallback_memory == b.fallback_memory && a.count_denied == b.count_denied &&
         a.block == b.block && a.on_change == b.on_change && a.block_list == b.block_list;
}

// The previous limit's table, kept or retuned, when it can serve `spec` in `memory`.
std::optional<local::TableLimit> kept_table(const CompiledLimit* previous,
                                            const spec::LimitSpec& spec, std::size_t memory,
                                            core::Nanos now, config::OnChange on_change) {
  if (previous == nullptr || !previous->table || previous->memory != memory ||
      previous->spec.params.index() != spec.params.index()) {
    return std::nullopt;
  }
  const bool changed = previous->spec.canonical != spec.canonical;
  // reset: a new table, every key starts as never seen (its memory goes back with the old one).
  if (changed && on_change == config::OnChange::kReset) return std::nullopt;
  local::TableLimit kept = *previous->table;
  if (changed) {
    std::visit(
        [&](auto& table) {
          using Params = typename std::decay_t<decltype(*table)>::Params;
          table->retune(std::get<Params>(spec.params), now,
                        on_change == config::OnChange::kProportional);
        },
        kept.table);
    kept.spec = spec;
  }
  return kept;
}

// The failure policy of each rule kept in Redis, for the breaker's log lines: one name when
// every such rule has the same, else each policy with its rules, at most 8 names a policy.
std::string policies_in_force(const config::RuleSet& rules) {
  std::map<std::string_view, std::vector<std::string_view>> rules_of;  // ordered by policy
  for (const config::Rule& r : rules.rules) {
    if (rules.storage_of(r) != config::Storage::kRedis) continue;
    rules_of[backend::redis::failure_policy_name(
                 backend_policy(rules.redis_options_of(r).on_failure))]
        .push_back(r.name);
  }
  if (rules_of.empty()) {
    return std::string(
        backend::redis::failure_policy_name(backend_policy(rules.redis->defaults.on_failure)));
  }
  if (rules_of.size() == 1) return std::string(rules_of.begin()->first);
  constexpr std::size_t kNamed = 8;
  std::string out;
  for (const auto& [policy, names] : rules_of) {
    if (!out.empty()) out += "; ";
    out += policy;
    out += ": ";
    for (std::size_t i = 0; i < names.size() && i < kNamed; ++i) {
      if (i > 0) out += ", ";
      out += names[i];
    }
    if (names.size() > kNamed) out += ", +" + std::to_string(names.size() - kNamed) + " more";
  }
  return out;
}

}  // namespace

std::optional<backend::redis::StoreOptions> store_options(const config::RuleSet& rules) {
  if (!rules.redis || !rules.redis->configured()) return std::nullopt;
  // The url (or sentinels) with the db, the secrets and TLS folded in.
  auto url = rules.redis->store_url();
  if (!url) return std::nullopt;  // validate() reported it; a valid RuleSet never gets here
  backend::redis::StoreOptions o;
  o.client.url = *url;
  o.client.timeout = rules.redis->timeout;
  o.client.connect_timeout = rules.redis->timeout;
  // A Redis that comes back is found within this, so decisions return to it within a second.
  o.client.reconnect_max = 250 * core::kNanosPerMilli;
  o.cache_denials = rules.redis->cache_denials;
  o.on_failure = policies_in_force(rules);  // for the server log
  return o;
}

backend::redis::RemoteLimitOptions remote_options(const config::RedisRuleOptions& o,
                                                  core::Nanos permit_ttl) {
  backend::redis::RemoteLimitOptions out;
  out.on_failure = backend_policy(o.on_failure);
  out.local_share = o.local_share;
  out.lease = o.lease;
  out.lease_ttl = o.lease_ttl;
  out.concurrency_lease_ttl = permit_ttl;
  return out;
}

core::Expected<CompiledLimit> make_limit(std::string name, const spec::LimitSpec& spec,
                                         const Placement& where, const CompiledLimit* previous,
                                         core::Nanos now, config::OnChange on_change) {
  CompiledLimit limit;
  limit.spec = spec;
  limit.quota = quota_of(spec);
  if (where.redis) {
    const std::string& in_redis = where.redis_name.empty() ? name : where.redis_name;
    auto options = *where.redis;
    options.on_change = backend_on_change(on_change);
    const bool replaced =
        previous != nullptr && previous->remote != nullptr && previous->remote->name() == in_redis;
    if (replaced && previous->spec.canonical == spec.canonical &&
        same_options(previous->remote->options(), options)) {
      limit.remote = previous->remote;  // its local fallback keeps its state
    } else {
      // With on_change: proportional, the limit it replaces names the numbers of the states
      // written before (under keep), so those are rescaled too.
      auto remote = backend::redis::RemoteLimit::make(in_redis, spec, options,
                                                      replaced ? &previous->spec : nullptr);
      if (!remote) return core::make_error(remote.error());
      limit.remote = *remote;
    }
  } else if (auto kept = kept_table(previous, spec, where.memory, now, on_change)) {
    limit.table = std::move(*kept);
  } else {
    auto table = local::make_table_limit(spec, where.memory);
    if (!table) return core::make_error(table.error());
    limit.table = std::move(*table);
  }
  limit.memory = where.memory;
  limit.name = std::move(name);
  if (spec::calendar_aligned(spec)) limit.wall = where.wall;
  return limit;
}

LazyLimits::Got LazyLimits::get(std::string_view id,
                                const std::function<core::Expected<CompiledLimit>()>& make) {
  std::lock_guard lock(mutex_);
  if (auto it = limits_.find(id); it != limits_.end()) return {it->second.get(), Miss::kNone, {}};
  if (limits_.size() >= cap_) return {nullptr, Miss::kFull, {}};
  auto made = make();
  if (!made) return {nullptr, Miss::kFailed, made.error()};
  auto kept = std::make_unique<const CompiledLimit>(std::move(made).value());
  return {limits_.emplace(std::string(id), std::move(kept)).first->second.get(), Miss::kNone, {}};
}

}  // namespace sluice::engine::detail
