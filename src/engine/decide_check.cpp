// The decision service's decisions (internal.hpp): one key against a configured rule or an
// inline limit, kept here or in Redis; a concurrency rule's permit is kept for the caller.
#include "internal.hpp"
#include "lease_book.hpp"

namespace sluice::engine::detail {
namespace {

void count(std::atomic<std::uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

bool is_concurrency(const CompiledLimit& limit) {
  return std::holds_alternative<core::Concurrency::Params>(limit.spec.params);
}

}  // namespace

Progress start_one(const CompiledLimit& limit, const config::Rule* rule, RuleCounters* counters,
                   std::string_view key, std::int64_t cost, core::Nanos max_wait, core::Nanos now,
                   AskKind kind, Outcome& out) {
  const bool enforced = rule == nullptr || rule->action != config::Action::kDryRun;
  out.applied.push_back(
      Applied{&limit, rule, core::Decision{true, 0, -1, 0, 0, -1}, enforced, counters});
  if (limit.in_redis()) {
    std::unique_ptr<Remote, RemoteDeleter> remote(new Remote);
    remote->kind = kind;
    remote->local = out.applied.back().decision;
    remote->now = now;
    RemotePart& part = remote->one();
    part.applied.push_back(0);
    part.query.items.push_back(remote_item(limit, std::string(key), max_wait));
    part.query.cost = cost;
    out.remote = std::move(remote);
    return Progress::kPending;
  }
  local::LimitAsk ask{&limit.table->table, table::hash_key(key), max_wait, false};
  local::EachDecision each;
  out.total = local::decide_all({&ask, 1}, now, cost, {&each, 1}, out.leases);
  out.applied.back().decision = out.total;
  return Progress::kDone;
}

void conclude_check(Outcome& out, core::Nanos now, LeaseBook& book) {
  Applied& a = out.applied.front();
  if (out.total.overflow) {
    out.verdict = Verdict::kInvalid;
    out.error = "cost is too large for this limit (its wait leaves the time range)";
    out.error_field = "cost";
    out.leases.clear();
    return;
  }
  if (a.counters != nullptr) {
    if (out.total.allowed) {
      count(a.counters->allowed);
      if (out.total.delay > 0) count(a.counters->delayed);
    } else {
      count(a.enforced ? a.counters->denied : a.counters->dry_run_denied);
    }
  }
  // A dry-run rule never tells its caller to refuse.
  out.verdict = out.total.allowed || !a.enforced ? Verdict::kAllow : Verdict::kDeny;
  if (!out.total.allowed) out.decided_by = 0;
  out.delay = out.total.allowed ? out.total.delay : 0;
  if (!out.total.allowed || !is_concurrency(*a.limit)) return;
  out.lease_ttl = a.rule != nullptr ? a.rule->permit_ttl : 60 * core::kNanosPerSecond;
  if (out.remote && !out.remote->leases.empty()) {
    const backend::redis::RemoteLease& held = out.remote->leases.front();
    out.lease_token = remote_lease_token(held.id, a.limit->name, held.key);
    out.remote->leases.clear();  // the caller gives it back, or Redis lets it expire
  } else if (!out.leases.empty()) {
    out.lease_token = book.keep(std::move(out.leases.back()), now, out.lease_ttl);
    out.leases.pop_back();
  }
}

}  // namespace sluice::engine::detail
