// The decision service's decisions (internal.hpp): one key against a configured rule or an
// inline limit, kept here or in Redis; a concurrency rule's permit is kept for the caller.
#include "internal.hpp"
#include "lease_book.hpp"

namespace sluice::engine::detail {
namespace {

bool is_concurrency(const CompiledLimit& limit) {
  return std::holds_alternative<core::Concurrency::Params>(limit.spec.params);
}

}  // namespace

Progress start_one(const CompiledLimit& limit, const config::Rule* rule, RuleCounters* counters,
                   std::string_view key, std::int64_t cost, core::Nanos max_wait, core::Nanos now,
                   AskKind kind, Outcome& out) {
  const bool enforced = rule == nullptr || rule->action != config::Action::kDryRun;
  out.applied.push_back(
      applied(limit, rule, core::Decision{true, 0, -1, 0, 0, -1}, enforced, counters));
  const table::KeyHash hash = table::hash_key(key);
  if (limit.top) {
    KeyTag& tag = OutcomeAccess::key(out.applied.back());
    tag.clear(hash.bucket);
    tag.append(key);
  }
  if (limit.in_redis()) {
    std::unique_ptr<Remote, RemoteDeleter> remote = take_remote(out);
    remote->kind = kind;
    remote->local = out.applied.back().decision;
    remote->now = now;
    RemotePart& part = remote->one();
    part.applied.push_back(0);
    part.query.items.push_back(remote_item(limit, std::string(key), max_wait, now));
    part.query.cost = cost;
    remote_of(out) = std::move(remote);
    return Progress::kPending;
  }
  local::LimitAsk ask{&limit.table->table,
                      hash,
                      max_wait,
                      false,
                      limit.shift(now),
                      rule != nullptr && rule->count_denied};
  const bool blocks = limit.blocks && rule != nullptr && rule->block && enforced;
  if (blocks) {
    if (const auto until = limit.blocks->blocked_until(ask.key, now)) {
      out.total = blocked_decision(*until, now, limit.quota);
      out.applied.back().decision = out.total;
      return Progress::kDone;
    }
  }
  local::EachDecision each;
  out.total = local::decide_all({&ask, 1}, now, cost, {&each, 1}, leases_of(out));
  if (blocks && !out.total.allowed && out.total.retry_after != core::kNever) {
    start_block(*limit.blocks, ask.key, key, *rule->block, now, out.total);
  }
  out.applied.back().decision = out.total;
  return Progress::kDone;
}

namespace {

// An allowed concurrency check's permit, kept for the caller: a token for the one held in
// Redis, or the local one in `book`. False (the outcome refused) when the rule holds as many
// permits as it may; the permit went back.
bool keep_permit(Outcome& out, const Applied& a, core::Nanos now, LeaseBook& book) {
  const CompiledLimit& limit = compiled_of(a);
  out.lease_ttl = a.rule != nullptr ? a.rule->permit_ttl : 60 * core::kNanosPerSecond;
  auto& remote = remote_of(out);
  local::Leases& leases = leases_of(out);
  if (remote && !remote->leases.empty()) {
    const backend::redis::RemoteLease& held = remote->leases.front();
    out.lease_token = remote_lease_token(held.id, limit.name, held.key);
    remote->leases.clear();  // the caller gives it back, or Redis lets it expire
    return true;
  }
  if (leases.empty()) return true;
  const std::int64_t cap = a.rule != nullptr ? a.rule->max_permits : config::kDefaultMaxPermits;
  auto token = book.keep(std::move(leases.back()), limit.name, cap, now, out.lease_ttl);
  leases.pop_back();
  if (!token) {
    refuse(out, ErrorKind::kExhausted,
           "rule '" + std::string(limit.name) + "' holds " + std::to_string(cap) +
               " permits, its max_permits; give some back (POST /v1/release, SLUICE.RELEASE) "
               "or let them expire (permit_ttl)");
    return false;
  }
  out.lease_token = std::move(*token);
  return true;
}

}  // namespace

void conclude_check(Outcome& out, core::Nanos now, LeaseBook& book) {
  const Applied& a = out.applied.front();
  if (out.total.overflow) {
    refuse(out, ErrorKind::kBadCost,
           "cost is too large for this limit (its wait leaves the time range)");
    leases_of(out).clear();
    return;
  }
  if (out.total.allowed && is_concurrency(compiled_of(a)) && !keep_permit(out, a, now, book)) {
    return;
  }
  if (RuleCounters* counters = counters_of(a)) {
    count_decision(*counters, out.total.allowed, a.enforced, out.total.delay);
    note_key(a, !out.total.allowed, now);
    if (!a.enforced && !out.total.allowed) tally_dry_run_denial(a);
  }
  // A dry-run rule never tells its caller to refuse.
  out.verdict = out.total.allowed || !a.enforced ? Verdict::kAllow : Verdict::kDeny;
  if (!out.total.allowed) out.decided_by = 0;
  out.delay = out.total.allowed ? out.total.delay : 0;
}

}  // namespace sluice::engine::detail
