// What the engine's files share and frontends never see: compiling a snapshot, the Redis half
// of an outcome, the engine's way into an outcome, and the deciders of each kind of ask.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "event_tally.hpp"
#include "sluice/backend/redis/query.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/local/policy.hpp"
#include "snapshot.hpp"
#include "top_sketch.hpp"

namespace sluice::engine::detail {

static_assert(kInlineLimits == local::kInline, "an outcome holds what a policy decides at once");

// Builds the snapshot of `rules` (already validated), keeping `old`'s tables and counters
// where the rule is unchanged or only retuned. Errors: a table that cannot be made.
core::Expected<std::shared_ptr<Snapshot>> compile(config::RuleSet rules, const Snapshot* old,
                                                  core::Nanos now, const core::Clock* wall);

// Which decider concludes an outcome once Redis has answered.
enum class AskKind { kHttp, kRule, kInline, kThrottle, kRls, kKey };

// One query to Redis, all or none: what is asked, and the `applied` index of each item.
struct RemotePart {
  backend::redis::Query query;
  std::vector<std::size_t> applied;
  bool enforced = true;  // false: a shadow-mode RLS limit, decided alone, never refusing
  // Who answered: Redis, or (a failure) the failure policies of its items.
  backend::redis::Source source = backend::redis::Source::kRedis;
};

// The part of an outcome kept in Redis. An outcome keeps the one it used for its next
// decision (OutcomeAccess::spare_remote, take_remote): its vectors' room is reused, so a
// connection's decisions kept in Redis allocate none of it after the first.
struct Remote {
  AskKind kind = AskKind::kHttp;
  std::vector<RemotePart> parts;  // sent together by the loop's store
  core::Decision local;           // the local limits' combined decision
  core::Nanos now = 0;            // when it was asked (for a failure policy's answer)
  // RLS: an `applied` entry that is another's descriptor again (same limit, same key) takes
  // that one's decision: (copy, original).
  std::vector<std::pair<std::size_t, std::size_t>> copies;
  std::vector<backend::redis::RemoteLease> leases;  // concurrency permits held in Redis
  // Alive while the gateway request holding `leases` runs: the loop's store renews them until
  // Loop::release, or until this is dropped with the outcome (then the store releases them).
  std::shared_ptr<const void> holder;
  // A KeyAsk: who answered (kRedis, or none: Redis unavailable) and whether the key was stored.
  backend::redis::Source source = backend::redis::Source::kRedis;
  bool seen = false;
  // Loop::complete's while the store has it: each part's answer, how many are still out, and
  // when it was handed over.
  std::vector<backend::redis::Answer> answers;
  std::size_t left = 0;
  core::Nanos started = 0;

  // A part, cleared (one a former decision used when there is one).
  RemotePart& add_part() {
    if (spare_.empty()) return parts.emplace_back();
    parts.push_back(std::move(spare_.back()));
    spare_.pop_back();
    return parts.back();
  }
  // One part, for the asks whose Redis limits are decided together.
  RemotePart& one() { return parts.empty() ? add_part() : parts.front(); }
  // Back to as made, keeping the room of its vectors (and of its parts').
  void clear();

 private:
  std::vector<RemotePart> spare_;  // parts cleared, for add_part()
};

// The engine's way into an outcome's private parts.
struct OutcomeAccess {
  static std::shared_ptr<const Snapshot>& snapshot(Outcome& o) { return o.snapshot_; }
  static const CompiledRoute*& route(Outcome& o) { return o.route_; }
  static CanonicalAddress& client(Outcome& o) { return o.client_; }
  static std::unique_ptr<Remote, RemoteDeleter>& remote(Outcome& o) { return o.remote_; }
  static std::unique_ptr<Remote, RemoteDeleter>& spare_remote(Outcome& o) {
    return o.spare_remote_;
  }
  static AdaptiveHold& adaptive(Outcome& o) { return o.adaptive_; }
  static local::Leases& leases(Outcome& o) {
    return *std::launder(reinterpret_cast<local::Leases*>(o.permits_.storage_));
  }
  static local::Leases& leases(HeldPermits& p) {
    return *std::launder(reinterpret_cast<local::Leases*>(p.storage_));
  }
  static core::Nanos& asked_at(Outcome& o) { return o.asked_at_; }
  static absl::InlinedVector<Settlement, 1>& settle(Outcome& o) { return o.settle_; }
  static const absl::InlinedVector<Settlement, 1>& settle(const Outcome& o) { return o.settle_; }
  static KeyTag& key(Applied& a) { return a.key_; }
  static const KeyTag& key(const Applied& a) { return a.key_; }
  static const CompiledLimit* compiled(const Applied& a) { return a.compiled_; }
  static RuleCounters* counters(const Applied& a) { return a.counters_; }
  static Applied make(const CompiledLimit& limit, const config::Rule* rule,
                      const core::Decision& decision, bool enforced, RuleCounters* counters,
                      std::uint32_t item) {
    Applied a;
    a.limit = LimitView{limit.name, limit.quota, limit.unlimited(),
                        limit.rls ? &limit.rls->rate : nullptr};
    a.rule = rule;
    a.decision = decision;
    a.enforced = enforced;
    a.item = item;
    a.compiled_ = &limit;
    a.counters_ = counters;
    return a;
  }
};

inline const Snapshot& snapshot_of(Outcome& o) { return *OutcomeAccess::snapshot(o); }
inline local::Leases& leases_of(Outcome& o) { return OutcomeAccess::leases(o); }
inline std::unique_ptr<Remote, RemoteDeleter>& remote_of(Outcome& o) {
  return OutcomeAccess::remote(o);
}
// An empty Remote for `o`'s decision: the one `o` used before, or a new one.
inline std::unique_ptr<Remote, RemoteDeleter> take_remote(Outcome& o) {
  auto& spare = OutcomeAccess::spare_remote(o);
  return spare ? std::move(spare) : std::unique_ptr<Remote, RemoteDeleter>(new Remote);
}
inline const CompiledLimit& compiled_of(const Applied& a) { return *OutcomeAccess::compiled(a); }
inline RuleCounters* counters_of(const Applied& a) { return OutcomeAccess::counters(a); }
inline Applied applied(const CompiledLimit& limit, const config::Rule* rule,
                       const core::Decision& decision, bool enforced, RuleCounters* counters,
                       std::uint32_t item = 0) {
  return OutcomeAccess::make(limit, rule, decision, enforced, counters, item);
}

// Counts one decision of a rule or an RLS limit under its outcome (a delayed one is also allowed).
inline void count_decision(RuleCounters& c, bool allowed, bool enforced, core::Nanos delay) {
  std::atomic<std::uint64_t>& n = allowed ? c.allowed : enforced ? c.denied : c.dry_run_denied;
  n.fetch_add(1, std::memory_order_relaxed);
  if (allowed && delay > 0) c.delayed.fetch_add(1, std::memory_order_relaxed);
}

// Notes one decision of a rule in its top keys (sluice/engine/top_keys.hpp): nothing for a limit
// without them (inline, RLS) or a key the request lacked.
inline void note_key(const Applied& a, bool denied, core::Nanos now) {
  const KeyTag& tag = OutcomeAccess::key(a);
  TopSlot* slot = compiled_of(a).top.get();
  if (slot == nullptr || !tag.set) return;
  if (TopSketch* top = slot->take()) top->note(tag, denied, now);
}

// Counts a dry-run rule's would-be refusal for the server log (Engine::take_dry_run_denials).
inline void tally_dry_run_denial(const Applied& a, std::string_view route = {}) {
  const KeyTag& tag = OutcomeAccess::key(a);
  EventTally* t = compiled_of(a).dry_run_denials.get();
  if (t != nullptr && tag.set) t->add(tag, route);
}

// An ask refused before it is decided.
inline void refuse(Outcome& out, ErrorKind kind, std::string error) {
  out.verdict = Verdict::kInvalid;
  out.error_kind = kind;
  out.error = std::move(error);
}

// Every part answered by the failure policies (no store to ask).
std::vector<backend::redis::Answer> answer_without_store(const Remote& remote);

class LeaseBook;

// The deciders: each fills `out` (already reset, snapshot set) and says whether Redis is
// still to be asked; the conclusions run then, or after Redis has answered.
Progress start_http(const RequestView& r, core::Nanos now, Outcome& out);
void conclude_http(Outcome& out, core::Nanos now);

// A route's adaptive limit (decide_adaptive.cpp). Before the rules: the request's tier, and
// whether it is limited at all (health checks, the bypass list are not). After them, on an
// allowed request: a permit, a place in the queue (out.queued), or the route's refusal.
void classify_adaptive(const CompiledRoute& route, const RequestView& r,
                       std::span<const config::Cidr> trusted, Outcome& out);
void admit_adaptive(Outcome& out, core::Nanos now);
// A queued request: `wake` runs (on any thread) once the limit hands it a permit.
void wake_on_grant(Outcome& out, std::function<void()> wake);
// After the wait for a place in the queue: the permit, or the route's refusal.
void claim_adaptive(Outcome& out);
// The permit back (or the place in the queue given up), with what the upstream did.
void release_adaptive(Outcome& out, UpstreamResult result, core::Nanos now);

// One key against one limit (a rule's, or an inline one with no rule and no counters).
Progress start_one(const CompiledLimit& limit, const config::Rule* rule, RuleCounters* counters,
                   std::string_view key, std::int64_t cost, core::Nanos max_wait, core::Nanos now,
                   AskKind kind, Outcome& out);
// Counts, and keeps a concurrency permit for the caller in `book` (or as a Redis token).
void conclude_check(Outcome& out, core::Nanos now, LeaseBook& book);

// An admitted gateway request's rules kept in Redis that settle after the response: what
// Redis (or the local fallback) charged them, kept for Loop::settle (engine/settle.hpp).
void keep_remote_settlements(Outcome& out);

// An RLS outcome: OVER_LIMIT (kDeny) when an enforced descriptor is over its limit.
void conclude_rls(Outcome& out);
// A CL.THROTTLE outcome: allowed or limited, or refused when the quantity overflows.
void conclude_throttle(Outcome& out, RuleCounters& counters);

// A KeyAsk on a rule: its key's state (or its reset) in the rule's table, or asked of Redis.
Progress start_key(const Snapshot& snap, const KeyAsk& a, core::Nanos now, Outcome& out);
// Redis's answer to a KeyAsk, or a refusal when Redis did not give one.
void conclude_key(Outcome& out);

// The limit as Redis keeps it: a query item for `key`, asked at `now` (a calendar window's
// item carries the Unix time of it, which names its windows).
backend::redis::QueryItem remote_item(const CompiledLimit& limit, std::string key,
                                      core::Nanos max_wait, core::Nanos now);

}  // namespace sluice::engine::detail
