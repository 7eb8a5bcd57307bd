// The gateway's decision (internal.hpp): the route a request matches, its rules' keys, the
// local rules decided together, then the Redis ones; counters, status and body from that.
#include "internal.hpp"
#include "keys.hpp"
#include "sluice/proto/http/field_values.hpp"

namespace sluice::engine::detail {

using proto::http::host_without_port;
using proto::http::iequals;

namespace {

bool matches(const config::RouteMatch& m, const RequestView& r) {
  if (!m.host.empty() && !iequals(m.host, host_without_port(r.host))) return false;
  if (!m.path_exact.empty() && r.path != m.path_exact) return false;
  if (!m.path_prefix.empty() && !r.path.starts_with(m.path_prefix)) return false;
  if (!m.methods.empty()) {
    bool any = false;
    for (const auto& method : m.methods) any = any || iequals(method, r.method);
    if (!any) return false;
  }
  return true;
}

const CompiledRoute* match(const Snapshot& snap, const RequestView& r) {
  for (const auto& route : snap.routes) {
    if (matches(route->route.match, r)) return route.get();
  }
  return nullptr;
}

void count(std::atomic<std::uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

// A rule's key in this request: hashed (for a local rule, where it stands), and as text for
// one kept in Redis and for a rule with tiers or overrides, which chooses by it; the limit it
// is charged against; its text cut short under its hash, for the rule's top keys.
struct RuleKey {
  table::KeyHash hash{};
  std::string text;
  bool missing = false;
  const CompiledLimit* limit = nullptr;
  KeyTag tag;
};

// The request's key for `rule` into `key` (false: a part is missing), and the limit it is
// charged against: its override, else the tier its `tier` attribute names, believed only from
// a trusted peer (`tier_trusted`), so that a client cannot name its own plan; else the default.
bool rule_key(const CompiledRule& rule, const RequestView& r, std::string_view client,
              std::string_view route, bool tier_trusted, RuleKey& key) {
  key.limit = &rule.limit;
  if (!rule.has_variants() && !rule.limit.in_redis()) {
    return hash_request_key(rule.rule.key, r, client, route, key.hash, key.tag);
  }
  if (!request_key_text(rule.rule.key, r, client, route, key.text)) return false;
  if (rule.has_variants()) {
    std::optional<std::string_view> tier;
    proto::http::IpAddress network;
    if (tier_trusted && rule.rule.tier) {
      tier = part_value(*rule.rule.tier, r, client, route, network);
    }
    key.limit = &rule.limit_for(key.text, tier);
  }
  key.hash = table::hash_key(key.text);
  key.tag.clear(key.hash.bucket);
  key.tag.append(key.text);
  return true;
}

// Dry-run rules: each decided alone, as if enforced, and counted; never blocking.
void decide_dry_run(const CompiledRoute& route, const RequestView& r, bool tier_trusted,
                    core::Nanos now, Outcome& out) {
  for (const RouteRule& rr : route.dry_run) {
    const CompiledRule& rule = *rr.rule;
    RuleKey key;
    if (!rule_key(rule, r, out.client(), route.route.name, tier_trusted, key)) {
      count(rr.counters->missing_key);
      continue;
    }
    local::LimitAsk ask{&key.limit->table->table, key.hash, 0, false};
    local::EachDecision each;
    const core::Decision d = local::decide_all({&ask, 1}, now, 1, {&each, 1}, leases_of(out));
    count(d.allowed ? rr.counters->allowed : rr.counters->dry_run_denied);
    Applied& a =
        out.applied.emplace_back(applied(*key.limit, &rule.rule, d, false, rr.counters.get()));
    OutcomeAccess::key(a) = key.tag;
    note_key(a, !d.allowed, now);
    if (!d.allowed) tally_dry_run_denial(a, route.route.name);
  }
}

// Keys of every enforce rule; false (with `out` a denial) when a rule that denies a missing
// key misses it.
bool enforce_keys(const CompiledRoute& route, const RequestView& r, bool tier_trusted, Outcome& out,
                  std::span<RuleKey> keys) {
  for (std::size_t i = 0; i < route.enforce.size(); ++i) {
    const RouteRule& rr = route.enforce[i];
    const CompiledRule& rule = *rr.rule;
    if (rule_key(rule, r, out.client(), route.route.name, tier_trusted, keys[i])) continue;
    keys[i].missing = true;
    count(rr.counters->missing_key);  // counted once: a missing key, not also a denial
    if (rule.rule.on_missing_key != config::OnMissingKey::kDeny) continue;
    out.verdict = Verdict::kDeny;
    out.missing_key = true;
    out.status = rule.rule.missing_key_status;
    out.body = rule.rule.body;
    out.total = core::denied(0, 0, 0, core::kNever);
    out.applied.push_back(applied(rule.limit, &rule.rule, out.total, true, nullptr));
    out.decided_by = static_cast<int>(out.applied.size() - 1);
    return false;
  }
  return true;
}

// A key an enforce rule has blocked (on_deny: block) is refused by that rule until its block
// ends, no limit asked; true with `out` that refusal.
bool refuse_blocked(const CompiledRoute& route, std::span<const RuleKey> keys, core::Nanos now,
                    Outcome& out) {
  for (std::size_t i = 0; i < route.enforce.size(); ++i) {
    const RouteRule& rr = route.enforce[i];
    const CompiledRule& rule = *rr.rule;
    if (keys[i].missing || !rule.limit.blocks) continue;
    const auto until = rule.limit.blocks->blocked_until(keys[i].hash, now);
    if (!until) continue;
    out.verdict = Verdict::kDeny;
    out.status = rule.rule.status;
    out.body = rule.rule.body;
    out.total = blocked_decision(*until, now, keys[i].limit->quota);
    Applied& a = out.applied.emplace_back(
        applied(*keys[i].limit, &rule.rule, out.total, true, rr.counters.get()));
    OutcomeAccess::key(a) = keys[i].tag;
    note_key(a, true, now);
    out.decided_by = static_cast<int>(out.applied.size() - 1);
    count(rr.counters->denied);
    return true;
  }
  return false;
}

// A local rule's refusal that blocks the key: its text is written out now (such a rule hashes
// its key where it stands), once per block, for the listing of blocks.
void start_local_block(const CompiledRule& rule, const RequestView& r, std::string_view client,
                       std::string_view route, RuleKey& key, core::Nanos now, core::Decision& d) {
  if (key.text.empty()) request_key_text(rule.rule.key, r, client, route, key.text);
  start_block(*rule.limit.blocks, key.hash, key.text, *rule.rule.block, now, d);
}

}  // namespace

Progress start_http(const RequestView& r, core::Nanos now, Outcome& out) {
  const Snapshot& snap = snapshot_of(out);
  client_address(r, snap.rules.trusted_proxies, OutcomeAccess::client(out));
  const CompiledRoute* route = match(snap, r);
  if (route == nullptr) {
    out.verdict = Verdict::kNoRoute;
    out.status = 404;
    out.body = "no route\n";
    return Progress::kDone;
  }
  OutcomeAccess::route(out) = route;
  if (route->gate) classify_adaptive(*route, r, snap.rules.trusted_proxies, out);
  const std::size_t n = route->enforce.size();
  absl::InlinedVector<RuleKey, kInlineLimits> keys(n);
  const bool tier_trusted = trusted_peer(r, snap.rules.trusted_proxies);
  if (!enforce_keys(*route, r, tier_trusted, out, keys)) return Progress::kDone;
  if (refuse_blocked(*route, keys, now, out)) return Progress::kDone;

  // Local rules first: a request they deny never costs a round trip to Redis.
  absl::InlinedVector<local::LimitAsk, local::kInline> asks;
  for (std::size_t i = 0; i < n; ++i) {
    const CompiledRule& rule = *route->enforce[i].rule;
    if (keys[i].missing || rule.limit.in_redis()) continue;
    asks.push_back({&keys[i].limit->table->table, keys[i].hash, rule.max_wait(), false,
                    keys[i].limit->shift(now), rule.rule.count_denied, rule.rule.reserved()});
  }
  absl::InlinedVector<local::EachDecision, local::kInline> each(asks.size());
  int chosen = -1;
  out.total = core::Decision{true, 0, -1, 0, 0, -1};
  if (!asks.empty()) {
    out.total = route->route.combine == config::Combine::kFirst
                    ? local::decide_first(asks, now, 1, each, leases_of(out), chosen)
                    : local::decide_all(asks, now, 1, each, leases_of(out));
  }
  // `applied`: the enforce rules that decided, in route order, then the dry-run rules.
  std::unique_ptr<Remote, RemoteDeleter> remote;
  for (std::size_t i = 0, j = 0; i < n; ++i) {
    const RouteRule& rr = route->enforce[i];
    const CompiledRule& rule = *rr.rule;
    if (keys[i].missing) continue;
    const CompiledLimit& limit = *keys[i].limit;
    Applied a =
        applied(limit, &rule.rule, core::Decision{true, 0, -1, 0, 0, -1}, true, rr.counters.get());
    OutcomeAccess::key(a) = keys[i].tag;
    if (!rule.limit.in_redis()) {
      if (const local::EachDecision& d = each[j++]) {
        a.decision = *d;
        if (d->allowed && out.total.allowed && rule.rule.settles()) {
          OutcomeAccess::settle(out).push_back({static_cast<std::uint32_t>(out.applied.size()),
                                                Settlement::Where::kTable, rule.rule.reserved(),
                                                keys[i].hash.bucket, keys[i].hash.fingerprint});
        }
        if (!d->allowed && rule.limit.blocks) {
          start_local_block(rule, r, out.client(), route->route.name, keys[i], now, a.decision);
          if (out.total.retry_after != core::kNever) {
            out.total.retry_after = std::max(out.total.retry_after, a.decision.retry_after);
          }
        }
        out.applied.push_back(a);
      }
      continue;
    }
    if (!out.total.allowed) continue;  // never asked: a local rule already refused
    if (!remote) {
      remote = take_remote(out);
      remote->kind = AskKind::kHttp;
      remote->local = out.total;
      remote->now = now;
    }
    remote->one().applied.push_back(out.applied.size());
    remote->one().query.items.push_back(
        remote_item(limit, std::move(keys[i].text), rule.max_wait(), now));
    // A reserve is what admission charges this rule, in the same script call as the others.
    if (rule.rule.reserve) remote->one().query.items.back().cost = *rule.rule.reserve;
    out.applied.push_back(a);
  }
  decide_dry_run(*route, r, tier_trusted, now, out);
  if (remote) {
    remote_of(out) = std::move(remote);
    return Progress::kPending;
  }
  conclude_http(out, now);
  return Progress::kDone;
}

void conclude_http(Outcome& out, core::Nanos now) {
  const bool allowed = out.total.allowed;
  for (std::size_t k = 0; k < out.applied.size(); ++k) {
    const Applied& a = out.applied[k];
    if (!a.enforced) continue;
    if (allowed) {
      count(counters_of(a)->allowed);
      if (a.decision.delay > 0) count(counters_of(a)->delayed);
      note_key(a, false, now);
    } else if (!a.decision.allowed) {
      count(counters_of(a)->denied);
      note_key(a, true, now);
      if (out.decided_by < 0) out.decided_by = static_cast<int>(k);
    }
  }
  const CompiledRoute& route = *OutcomeAccess::route(out);
  if (!allowed) {
    // Charged nowhere: a limit that allowed still has what it had before this request.
    for (Applied& a : out.applied) {
      if (!a.enforced || !a.decision.allowed || a.decision.remaining < 0) continue;
      const std::int64_t capacity =
          a.limit.quota.burst > 0 ? a.limit.quota.burst : a.limit.quota.quota;
      a.decision.remaining = std::min(a.decision.remaining + 1, capacity);
    }
    out.verdict = Verdict::kDeny;
    // No rule denied on its own (a full table of leases): the first rule answers.
    const config::Rule& by =
        out.decided_by >= 0 ? *out.applied[out.decided_by].rule : route.enforce.front().rule->rule;
    out.status = by.status;
    out.body = by.body;
    leases_of(out).clear();
    return;
  }
  out.verdict = Verdict::kAllow;
  out.delay = out.total.delay;
  if (remote_of(out)) keep_remote_settlements(out);
  if (route.route.respond_status) {
    out.status = *route.route.respond_status;
    out.body = route.route.respond_body;
  }
  admit_adaptive(out, now);
}

}  // namespace sluice::engine::detail
