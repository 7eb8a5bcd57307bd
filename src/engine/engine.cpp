// Engine (engine.hpp): compiling a RuleSet into a snapshot that keeps unchanged limits'
// tables, and deciding a request against it.
#include "sluice/engine/engine.hpp"

#include <map>
#include <stdexcept>
#include <variant>

#include "sluice/config/loader.hpp"
#include "sluice/engine/quota.hpp"
#include "sluice/local/combined_decision.hpp"
#include "sluice/proto/http/prometheus_text.hpp"
#include "sluice/proto/http/ratelimit_fields.hpp"

namespace sluice::engine {
namespace {

bool matches(const config::RouteMatch& m, const RequestView& r) {
  if (!m.host.empty() && !iequals(m.host, host_without_port(r.host))) return false;
  if (!m.path_exact.empty() && r.path != m.path_exact) return false;
  if (!m.path_prefix.empty() && r.path.substr(0, m.path_prefix.size()) != m.path_prefix) {
    return false;
  }
  if (!m.methods.empty()) {
    bool any = false;
    for (const auto& method : m.methods) any = any || iequals(method, r.method);
    if (!any) return false;
  }
  return true;
}

// The table of a rule in the new snapshot: the old one as it is (same limit), the old one
// retuned (same algorithm and memory, other parameters: every key keeps its state), or new.
core::Expected<local::TableLimit> table_for(const config::Rule& rule, const CompiledRule* old,
                                            std::size_t memory, std::size_t old_memory,
                                            core::Nanos now) {
  if (old != nullptr && memory == old_memory &&
      old->rule.limit.params.index() == rule.limit.params.index()) {
    local::TableLimit kept = old->limit;
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

std::shared_ptr<RuleCounters> counters_for(const Snapshot* old, std::string_view route,
                                           std::string_view rule) {
  if (old != nullptr) {
    for (const auto& r : old->routes) {
      if (r->route.name != route) continue;
      for (std::size_t i = 0; i < r->enforce.size(); ++i) {
        if (r->enforce[i]->rule.name == rule) return r->enforce_counters[i];
      }
      for (std::size_t i = 0; i < r->dry_run.size(); ++i) {
        if (r->dry_run[i]->rule.name == rule) return r->dry_run_counters[i];
      }
    }
  }
  return std::make_shared<RuleCounters>();
}

constexpr std::size_t kRemoteRuleTable = 1024;

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

// The Redis form of a rule: the previous one when nothing about it changed (its local
// fallback keeps its state), else a new one.
core::Expected<std::shared_ptr<const backend::redis::RemoteLimit>> remote_for(
    const config::RuleSet& rules, const config::Rule& rule, const CompiledRule* old,
    const config::RuleSet* old_rules) {
  const config::RedisRuleOptions o = rules.redis_options_of(rule);
  if (old != nullptr && old->remote && old_rules != nullptr &&
      old->rule.limit.canonical == rule.limit.canonical &&
      old_rules->redis_options_of(old->rule) == o) {
    return old->remote;
  }
  backend::redis::RemoteLimitOptions options;
  options.on_failure = backend_policy(o.on_failure);
  options.local_share = o.local_share;
  options.lease = o.lease;
  options.lease_ttl = o.lease_ttl;
  return backend::redis::RemoteLimit::make(rule.name, rule.limit, options);
}

local::Combine combine_of(config::Combine c) {
  return c == config::Combine::kFirst ? local::Combine::kFirstThatAllows
                                      : local::Combine::kAllMustPass;
}

// The rate-limit response fields of a request from the decisions of the limits that applied:
// RateLimit-Policy and RateLimit (IETF draft), legacy X-RateLimit-* from the tightest limit,
// and Retry-After on a denial.
class ResponseFields {
 public:
  void add(std::string_view name, const spec::AlgorithmParams& params, const core::Decision& d) {
    const Quota q = quota_of(params);
    policies_.push_back({name, q.quota, q.window_seconds,
                         q.concurrent ? std::string_view("concurrent-requests") : ""});
    statuses_.push_back({name, std::max<std::int64_t>(d.remaining, 0),
                         q.concurrent ? -1 : core::ceil_seconds(d.reset_after)});
    if (!tightest_ || d.remaining < tightest_remaining_) {
      tightest_ = true;
      tightest_remaining_ = std::max<std::int64_t>(d.remaining, 0);
      tightest_quota_ = q.quota;
      tightest_reset_ = core::ceil_seconds(d.reset_after);
    }
  }

  void write(const config::RuleSet& rules, const core::Decision& total,
             std::vector<std::pair<std::string, std::string>>& out) const {
    if (rules.ratelimit_headers && !policies_.empty()) {
      out.emplace_back("RateLimit-Policy", proto::http::ratelimit_policy(policies_));
      out.emplace_back("RateLimit", proto::http::ratelimit(statuses_));
    }
    if (rules.legacy_headers && tightest_) {
      out.emplace_back("X-RateLimit-Limit", std::to_string(tightest_quota_));
      out.emplace_back("X-RateLimit-Remaining", std::to_string(tightest_remaining_));
      out.emplace_back("X-RateLimit-Reset", std::to_string(tightest_reset_));
    }
    if (!total.allowed && total.retry_after != core::kNever && total.retry_after > 0) {
      out.emplace_back("Retry-After",
                       std::to_string(proto::http::retry_after_seconds(total.retry_after)));
    }
  }

 private:
  std::vector<proto::http::QuotaPolicy> policies_;
  std::vector<proto::http::QuotaStatus> statuses_;
  bool tightest_ = false;
  std::int64_t tightest_remaining_ = 0;
  std::int64_t tightest_quota_ = 0;
  std::int64_t tightest_reset_ = 0;
};

}  // namespace

Engine::Engine(config::RuleSet rules, core::Nanos now) {
  const auto errors = apply(std::move(rules), now);
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += e + "\n";
    throw std::invalid_argument(all);
  }
}

std::vector<std::string> Engine::apply(config::RuleSet rules, core::Nanos now) {
  std::vector<std::string> errors;
  for (const auto& e : config::validate(rules, "")) errors.push_back(e.format());
  if (!errors.empty()) return errors;

  const std::shared_ptr<const Snapshot> old = current_.load();
  auto snap = std::make_shared<Snapshot>();
  snap->rules = std::move(rules);
  snap->version = old ? old->version + 1 : 1;

  std::map<std::string, const CompiledRule*, std::less<>> by_name;
  for (const config::Rule& rule : snap->rules.rules) {
    const CompiledRule* previous = nullptr;
    if (old) {
      for (const auto& c : old->compiled) {
        if (c->rule.name == rule.name) previous = c.get();
      }
    }
    const bool remote = snap->rules.storage_of(rule) == config::Storage::kRedis;
    std::shared_ptr<const backend::redis::RemoteLimit> remote_limit;
    if (remote) {
      auto made = remote_for(snap->rules, rule, previous, old ? &old->rules : nullptr);
      if (!made) {
        errors.push_back("rule '" + rule.name + "': " + made.error());
        continue;
      }
      remote_limit = *made;
    }
    // A rule kept in Redis decides there; its table here is the smallest there is.
    auto limit =
        remote ? local::make_table_limit(rule.limit, kRemoteRuleTable)
               : table_for(rule, previous, snap->rules.memory, old ? old->rules.memory : 0, now);
    if (!limit) {
      errors.push_back("rule '" + rule.name + "': " + limit.error());
      continue;
    }
    snap->compiled.push_back(
        std::make_unique<CompiledRule>(CompiledRule{rule, *limit, std::move(remote_limit)}));
    by_name[rule.name] = snap->compiled.back().get();
  }
  if (!errors.empty()) return errors;

  for (const auto& compiled : snap->compiled) {
    snap->check_policies.push_back(std::make_unique<local::Policy>(
        local::Combine::kAllMustPass, std::vector<local::TableLimit>{compiled->limit}));
    std::shared_ptr<RuleCounters> counters;
    if (old) {
      for (std::size_t i = 0; i < old->compiled.size(); ++i) {
        if (old->compiled[i]->rule.name == compiled->rule.name) counters = old->check_counters[i];
      }
    }
    snap->check_counters.push_back(counters ? counters : std::make_shared<RuleCounters>());
  }

  for (const config::Route& route : snap->rules.routes) {
    auto c = std::make_unique<CompiledRoute>();
    c->route = route;
    c->upstream = route.upstream.empty() ? nullptr : snap->rules.upstream(route.upstream);
    std::vector<local::TableLimit> enforced;
    for (const auto& name : route.rules) {
      const CompiledRule* rule = by_name.at(name);
      auto counters = counters_for(old.get(), route.name, name);
      if (rule->rule.action == config::Action::kDryRun) {
        c->dry_run.push_back(rule);
        c->dry_run_counters.push_back(counters);
        c->dry_run_policies.push_back(std::make_unique<local::Policy>(
            local::Combine::kAllMustPass, std::vector<local::TableLimit>{rule->limit}));
      } else {
        if (rule->remote) {
          c->remote_rules.push_back(c->enforce.size());
        } else {
          c->local_rules.push_back(c->enforce.size());
          enforced.push_back(rule->limit);
        }
        c->enforce.push_back(rule);
        c->enforce_counters.push_back(counters);
      }
    }
    if (!enforced.empty()) {
      c->policy = std::make_unique<local::Policy>(combine_of(route.combine), std::move(enforced));
    }
    snap->routes.push_back(std::move(c));
  }
  current_.store(std::move(snap));
  return {};
}

Verdict Engine::decide(const RequestView& request, core::Nanos now) const {
  Verdict v;
  v.snapshot = current_.load();
  const Snapshot& snap = *v.snapshot;
  v.client = client_address(request, snap.rules.trusted_proxies);
  for (const auto& r : snap.routes) {
    if (matches(r->route.match, request)) {
      v.route = r.get();
      break;
    }
  }
  if (v.route == nullptr) {
    v.kind = Verdict::Kind::kNoRoute;
    v.status = 404;
    v.body = "no route\n";
    return v;
  }
  const CompiledRoute& route = *v.route;

  // Dry-run rules: decided and counted as if enforced, never blocking.
  for (std::size_t i = 0; i < route.dry_run.size(); ++i) {
    const config::Rule& rule = route.dry_run[i]->rule;
    const auto key = request_key(rule.key, request, v.client, route.route.name);
    if (!key) {
      route.dry_run_counters[i]->missing_key.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const std::string_view k = *key;
    auto d = route.dry_run_policies[i]->decide(std::span<const std::string_view>(&k, 1), now, 1,
                                               core::Nanos{0});
    auto& counter = d.decision.allowed ? route.dry_run_counters[i]->allowed
                                       : route.dry_run_counters[i]->dry_run_denied;
    counter.fetch_add(1, std::memory_order_relaxed);
    for (auto& lease : d.leases) v.leases.push_back(std::move(lease));
  }

  const std::size_t n = route.enforce.size();
  std::vector<std::string> keys(n);
  std::vector<std::string_view> views(n);
  std::vector<core::Nanos> waits(n);
  for (std::size_t i = 0; i < n; ++i) {
    const config::Rule& rule = route.enforce[i]->rule;
    waits[i] = rule.action == config::Action::kDelay ? rule.max_wait : 0;
    auto key = request_key(rule.key, request, v.client, route.route.name);
    if (key) {
      keys[i] = std::move(*key);
      views[i] = keys[i];
      continue;
    }
    route.enforce_counters[i]->missing_key.fetch_add(1, std::memory_order_relaxed);
    if (rule.on_missing_key == config::OnMissingKey::kDeny) {
      route.enforce_counters[i]->denied.fetch_add(1, std::memory_order_relaxed);
      v.kind = Verdict::Kind::kReject;
      v.status = rule.status;
      v.body = rule.body;
      v.leases.clear();
      return v;
    }
  }

  // Local rules first: a request they deny never costs a round trip to Redis. A route with
  // no Redis rule (the common case) passes its keys as they are, without copies.
  const bool all_local = route.remote_rules.empty();
  std::vector<core::Nanos> local_waits;
  std::vector<std::string_view> local_keys;
  if (!all_local) {
    for (std::size_t i : route.local_rules) {
      local_waits.push_back(waits[i]);
      local_keys.push_back(views[i]);
    }
  }
  v.each.assign(n, std::nullopt);
  if (route.policy) {
    local::PolicyDecision pd = all_local ? route.policy->decide(views, now, 1, waits)
                                         : route.policy->decide(local_keys, now, 1, local_waits);
    for (std::size_t j = 0; j < route.local_rules.size() && j < pd.each.size(); ++j) {
      v.each[route.local_rules[j]] = pd.each[j];
    }
    v.local_decision = pd.decision;
    for (auto& lease : pd.leases) v.leases.push_back(std::move(lease));
  }
  if (v.local_decision.allowed && !route.remote_rules.empty()) {
    backend::redis::Query query;
    for (std::size_t i : route.remote_rules) {
      if (views[i].empty()) continue;  // missing key, skipped as nginx skips an empty key
      query.items.push_back({route.enforce[i]->remote, std::move(keys[i]), waits[i]});
      v.remote_rules.push_back(i);
    }
    if (!query.items.empty()) {
      v.remote = std::move(query);
      return v;
    }
  }
  conclude(v, v.local_decision);
  return v;
}

Verdict Engine::finish(Verdict v, backend::redis::Answer answer) const {
  for (std::size_t k = 0; k < v.remote_rules.size() && k < answer.each.size(); ++k) {
    v.each[v.remote_rules[k]] = answer.each[k];
  }
  local::AllMustPass total;
  total.add(v.local_decision);
  total.add(answer.combined);
  v.remote.reset();
  v.remote_leases = std::move(answer.leases);
  conclude(v, total.result());
  return v;
}

// Counters, response fields and the verdict's kind from each enforce rule's decision.
void Engine::conclude(Verdict& v, const core::Decision& total) const {
  const CompiledRoute& route = *v.route;
  const Snapshot& snap = *v.snapshot;
  const std::size_t n = route.enforce.size();
  const bool allowed = total.allowed;
  ResponseFields fields;
  const config::Rule* denier = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    if (!v.each[i]) continue;
    const core::Decision& d = *v.each[i];
    const config::Rule& rule = route.enforce[i]->rule;
    RuleCounters& c = *route.enforce_counters[i];
    if (allowed) {
      c.allowed.fetch_add(1, std::memory_order_relaxed);
      if (d.delay > 0) c.delayed.fetch_add(1, std::memory_order_relaxed);
    } else if (!d.allowed) {
      c.denied.fetch_add(1, std::memory_order_relaxed);
      if (denier == nullptr) denier = &rule;
    }
    fields.add(rule.name, rule.limit.params, d);
  }
  fields.write(snap.rules, total, v.headers);

  if (!allowed) {
    v.kind = Verdict::Kind::kReject;
    const config::Rule& rule = denier != nullptr ? *denier : route.enforce.front()->rule;
    v.status = rule.status;
    v.body = rule.body;
    v.leases.clear();
    return;
  }
  v.delay = total.delay;
  if (route.route.respond_status) {
    v.kind = Verdict::Kind::kRespond;
    v.status = *route.route.respond_status;
    v.body = route.route.respond_body;
  } else {
    v.kind = Verdict::Kind::kForward;
  }
}

namespace {

// Decides one key against a single-limit policy and describes it for a client.
CheckResult check_one(local::Policy& policy, std::string_view name,
                      const spec::AlgorithmParams& params, const config::RuleSet& rules,
                      std::string_view key, std::int64_t cost, core::Nanos max_wait,
                      core::Nanos now) {
  CheckResult out;
  auto pd = policy.decide(std::span<const std::string_view>(&key, 1), now, cost, max_wait);
  out.decision = pd.decision;
  out.leases = std::move(pd.leases);
  ResponseFields fields;
  if (pd.each.front()) fields.add(name, params, *pd.each.front());
  fields.write(rules, out.decision, out.headers);
  return out;
}

// A decision-service answer in the rule's counters (route label "-").
void count_check(RuleCounters& c, const CheckResult& out) {
  if (out.decision.allowed) {
    c.allowed.fetch_add(1, std::memory_order_relaxed);
    if (out.decision.delay > 0) c.delayed.fetch_add(1, std::memory_order_relaxed);
  } else {
    (out.dry_run ? c.dry_run_denied : c.denied).fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

CheckResult Engine::check(std::string_view rule, std::string_view key, std::int64_t cost,
                          core::Nanos now) const {
  const auto snap = current_.load();
  for (std::size_t i = 0; i < snap->compiled.size(); ++i) {
    const config::Rule& r = snap->compiled[i]->rule;
    if (r.name != rule) continue;
    if (snap->compiled[i]->remote) {
      CheckResult out;
      out.dry_run = r.action == config::Action::kDryRun;
      backend::redis::Query query;
      query.items.push_back({snap->compiled[i]->remote, std::string(key),
                             r.action == config::Action::kDelay ? r.max_wait : 0});
      query.cost = cost;
      out.remote = std::move(query);
      out.snapshot = snap;
      out.rule_index = i;
      return out;
    }
    CheckResult out = check_one(*snap->check_policies[i], r.name, r.limit.params, snap->rules, key,
                                cost, r.action == config::Action::kDelay ? r.max_wait : 0, now);
    out.dry_run = r.action == config::Action::kDryRun;
    count_check(*snap->check_counters[i], out);
    return out;
  }
  CheckResult out;
  out.status = CheckResult::Status::kUnknownRule;
  out.error = "unknown rule '" + std::string(rule) + "'";
  return out;
}

CheckResult Engine::finish_check(CheckResult out, backend::redis::Answer answer) const {
  const Snapshot& snap = *out.snapshot;
  const config::Rule& r = snap.compiled[out.rule_index]->rule;
  out.remote.reset();
  out.decision = answer.combined;
  out.remote_leases = std::move(answer.leases);
  ResponseFields fields;
  fields.add(r.name, r.limit.params, answer.combined);
  fields.write(snap.rules, out.decision, out.headers);
  count_check(*snap.check_counters[out.rule_index], out);
  return out;
}

CheckResult Engine::check_inline(std::string_view limit_spec, std::string_view key,
                                 std::int64_t cost, core::Nanos max_wait, core::Nanos now) {
  auto spec = spec::parse_limit_spec(limit_spec);
  CheckResult out;
  if (!spec) {
    out.status = CheckResult::Status::kBadLimit;
    out.error = spec.error();
    return out;
  }
  if (spec->wait == spec::WaitSupport::kRejectOnly) max_wait = 0;
  const auto snap = current_.load();
  std::shared_ptr<local::Policy> policy;
  {
    std::lock_guard<std::mutex> guard(inline_mutex_);
    auto it = inline_.find(spec->canonical);
    if (it != inline_.end()) {
      policy = it->second;
    } else {
      if (inline_.size() >= kMaxInlineLimits) {
        out.status = CheckResult::Status::kBadLimit;
        out.error = "too many distinct inline limits (at most " + std::to_string(kMaxInlineLimits) +
                    "); configure rules instead";
        return out;
      }
      auto table =
          local::make_table_limit(*spec, std::min<std::size_t>(snap->rules.memory, 16u << 20));
      if (!table) {
        out.status = CheckResult::Status::kBadLimit;
        out.error = table.error();
        return out;
      }
      policy = std::make_shared<local::Policy>(local::Combine::kAllMustPass,
                                               std::vector<local::TableLimit>{*table});
      inline_.emplace(spec->canonical, policy);
    }
  }
  return check_one(*policy, spec->canonical, spec->params, snap->rules, key, cost, max_wait, now);
}

void Engine::write_metrics(std::string& out) const {
  using proto::http::prometheus_family;
  using proto::http::prometheus_sample;
  const auto snap = current_.load();
  constexpr std::string_view kRequests = "sluice_rule_requests_total";
  prometheus_family(out, kRequests, "counter",
                    "Requests decided by a rule on a route, by outcome.");
  auto all = [&](std::string_view route, const config::Rule& rule, const RuleCounters& c) {
    const std::pair<const char*, const std::atomic<std::uint64_t>*> outcomes[] = {
        {"allowed", &c.allowed},
        {"denied", &c.denied},
        {"delayed", &c.delayed},
        {"dry_run_denied", &c.dry_run_denied},
        {"missing_key", &c.missing_key}};
    for (const auto& [outcome, n] : outcomes) {
      prometheus_sample(out, kRequests,
                        {{"route", route}, {"rule", rule.name}, {"outcome", outcome}},
                        n->load(std::memory_order_relaxed));
    }
  };
  for (std::size_t i = 0; i < snap->compiled.size(); ++i) {
    all("-", snap->compiled[i]->rule, *snap->check_counters[i]);
  }
  for (const auto& r : snap->routes) {
    for (std::size_t i = 0; i < r->enforce.size(); ++i) {
      all(r->route.name, r->enforce[i]->rule, *r->enforce_counters[i]);
    }
    for (std::size_t i = 0; i < r->dry_run.size(); ++i) {
      all(r->route.name, r->dry_run[i]->rule, *r->dry_run_counters[i]);
    }
  }
  struct Gauge {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t (*get)(const table::TableStats&);
  };
  static constexpr Gauge kGauges[] = {
      {"sluice_limit_keys", "gauge", "Keys held in the rule's table.",
       [](const table::TableStats& s) { return static_cast<std::uint64_t>(s.keys); }},
      {"sluice_limit_capacity", "gauge", "Slots in the rule's table.",
       [](const table::TableStats& s) { return static_cast<std::uint64_t>(s.capacity); }},
      {"sluice_limit_memory_bytes", "gauge", "Memory budget mapped for the rule's table.",
       [](const table::TableStats& s) { return static_cast<std::uint64_t>(s.memory_bytes); }},
      {"sluice_limit_evictions_total", "counter", "Live keys evicted to make room for new ones.",
       [](const table::TableStats& s) { return s.evictions; }},
      {"sluice_limit_idle_drops_total", "counter", "Idle keys dropped to make room.",
       [](const table::TableStats& s) { return s.idle_drops; }},
  };
  for (const auto& g : kGauges) {
    prometheus_family(out, g.name, g.type, g.help);
    for (const auto& c : snap->compiled) {
      prometheus_sample(out, g.name, {{"rule", c->rule.name}}, g.get(local::stats_of(c->limit)));
    }
  }
}

}  // namespace sluice::engine
