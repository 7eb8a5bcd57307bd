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

// Dry-run rules: each decided alone, as if enforced, and counted; never blocking.
void decide_dry_run(const CompiledRoute& route, const RequestView& r, core::Nanos now,
                    Outcome& out) {
  for (const RouteRule& rr : route.dry_run) {
    const CompiledRule& rule = *rr.rule;
    local::LimitAsk ask{&rule.limit.table->table, {}, 0, false, rule.limit.shift(now)};
    if (!hash_request_key(rule.rule.key, r, out.client(), route.route.name, ask.key)) {
      count(rr.counters->missing_key);
      continue;
    }
    local::EachDecision each;
    const core::Decision d = local::decide_all({&ask, 1}, now, 1, {&each, 1}, leases_of(out));
    count(d.allowed ? rr.counters->allowed : rr.counters->dry_run_denied);
    out.applied.push_back(applied(rule.limit, &rule.rule, d, false, rr.counters.get()));
  }
}

// A rule's key in this request: hashed for a local rule, as text for one kept in Redis.
struct RuleKey {
  table::KeyHash hash{};
  std::string text;
  bool missing = false;
};

// Keys of every enforce rule; false (with `out` a denial) when a rule that denies a missing
// key misses it.
bool enforce_keys(const CompiledRoute& route, const RequestView& r, Outcome& out,
                  std::span<RuleKey> keys) {
  for (std::size_t i = 0; i < route.enforce.size(); ++i) {
    const RouteRule& rr = route.enforce[i];
    const CompiledRule& rule = *rr.rule;
    const bool present =
        rule.limit.in_redis()
            ? request_key_text(rule.rule.key, r, out.client(), route.route.name, keys[i].text)
            : hash_request_key(rule.rule.key, r, out.client(), route.route.name, keys[i].hash);
    if (present) continue;
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
    out.total = blocked_decision(*until, now, rule.limit.quota);
    out.applied.push_back(applied(rule.limit, &rule.rule, out.total, true, rr.counters.get()));
    out.decided_by = static_cast<int>(out.applied.size() - 1);
    count(rr.counters->denied);
    return true;
  }
  return false;
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
  const std::size_t n = route->enforce.size();
  absl::InlinedVector<RuleKey, kInlineLimits> keys(n);
  if (!enforce_keys(*route, r, out, keys)) return Progress::kDone;
  if (refuse_blocked(*route, keys, now, out)) return Progress::kDone;

  // Local rules first: a request they deny never costs a round trip to Redis.
  absl::InlinedVector<local::LimitAsk, local::kInline> asks;
  for (std::size_t i = 0; i < n; ++i) {
    const CompiledRule& rule = *route->enforce[i].rule;
    if (keys[i].missing || rule.limit.in_redis()) continue;
    asks.push_back({&rule.limit.table->table, keys[i].hash, rule.max_wait(), false,
                    rule.limit.shift(now), rule.rule.count_denied});
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
    Applied a = applied(rule.limit, &rule.rule, core::Decision{true, 0, -1, 0, 0, -1}, true,
                        rr.counters.get());
    if (!rule.limit.in_redis()) {
      if (const local::EachDecision& d = each[j++]) {
        a.decision = *d;
        if (!d->allowed && rule.limit.blocks) {
          start_block(*rule.limit.blocks, keys[i].hash, *rule.rule.block, now, a.decision);
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
      remote.reset(new Remote);
      remote->kind = AskKind::kHttp;
      remote->local = out.total;
      remote->now = now;
    }
    remote->one().applied.push_back(out.applied.size());
    remote->one().query.items.push_back(
        remote_item(rule.limit, std::move(keys[i].text), rule.max_wait()));
    out.applied.push_back(a);
  }
  decide_dry_run(*route, r, now, out);
  if (remote) {
    remote_of(out) = std::move(remote);
    return Progress::kPending;
  }
  conclude_http(out);
  return Progress::kDone;
}

void conclude_http(Outcome& out) {
  const bool allowed = out.total.allowed;
  for (std::size_t k = 0; k < out.applied.size(); ++k) {
    const Applied& a = out.applied[k];
    if (!a.enforced) continue;
    if (allowed) {
      count(counters_of(a)->allowed);
      if (a.decision.delay > 0) count(counters_of(a)->delayed);
    } else if (!a.decision.allowed) {
      count(counters_of(a)->denied);
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
  if (route.route.respond_status) {
    out.status = *route.route.respond_status;
    out.body = route.route.respond_body;
  }
}

}  // namespace sluice::engine::detail
