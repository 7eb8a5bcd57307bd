// The running rules: a compiled RuleSet snapshot that frontends ask "what do I do with this
// request?", swapped atomically on reload while the state of unchanged limits is kept.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/backend/redis/query.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/engine/request_view.hpp"
#include "sluice/local/policy.hpp"

namespace sluice::engine {

// Counters of one rule on one route (the Prometheus labels rule= and route=).
struct RuleCounters {
  std::atomic<std::uint64_t> allowed{0};
  std::atomic<std::uint64_t> denied{0};
  std::atomic<std::uint64_t> delayed{0};
  std::atomic<std::uint64_t> dry_run_denied{0};
  std::atomic<std::uint64_t> missing_key{0};
};

// A rule with its limit's table; the table (and so every key's state) is shared with the
// previous snapshot when the rule's limit is unchanged or only retuned.
struct CompiledRule {
  config::Rule rule;
  local::TableLimit limit;  // a rule kept in Redis has a minimal, unused table here
  std::shared_ptr<const backend::redis::RemoteLimit> remote;  // storage: redis
};

struct CompiledRoute {
  config::Route route;
  const config::Upstream* upstream = nullptr;  // null when the route responds locally
  std::vector<const CompiledRule*> enforce;    // reject and delay rules, in route order
  std::vector<const CompiledRule*> dry_run;    // decided and counted, never enforced
  std::vector<std::shared_ptr<RuleCounters>> enforce_counters;  // parallel to `enforce`
  std::vector<std::shared_ptr<RuleCounters>> dry_run_counters;  // parallel to `dry_run`
  // Over the local rules of `enforce` (null when there is none); local_rules[i] is the
  // `enforce` index of the policy's limit i. remote_rules lists the rules kept in Redis.
  std::unique_ptr<local::Policy> policy;
  std::vector<std::size_t> local_rules;
  std::vector<std::size_t> remote_rules;
  std::vector<std::unique_ptr<local::Policy>> dry_run_policies;  // one per `dry_run` rule
};

struct Snapshot {
  config::RuleSet rules;
  std::vector<std::unique_ptr<CompiledRule>> compiled;
  std::vector<std::unique_ptr<CompiledRoute>> routes;
  // The decision service's use of each rule (route label "-"), parallel to `compiled`.
  std::vector<std::unique_ptr<local::Policy>> check_policies;
  std::vector<std::shared_ptr<RuleCounters>> check_counters;
  std::uint64_t version = 0;
};

// A decision-service answer: one key against one rule (or an inline limit), for callers that
// act on it themselves (nginx auth_request, an app, CL-style clients).
struct CheckResult {
  enum class Status { kDecided, kUnknownRule, kBadLimit };
  Status status = Status::kDecided;
  std::string error;  // kUnknownRule / kBadLimit: what is wrong, naming it
  core::Decision decision;
  bool dry_run = false;  // a dry-run rule: counted, but the caller should not block on it
  std::vector<std::pair<std::string, std::string>> headers;  // RateLimit…, Retry-After
  local::Leases leases;  // a concurrency rule's permit: keep until the work is done
  // A rule kept in Redis: the caller asks its loop's backend::redis::Store, then
  // Engine::finish_check() fills `decision` and `headers` from the answer.
  std::optional<backend::redis::Query> remote;
  std::shared_ptr<const Snapshot> snapshot;  // with `remote`: the rule's snapshot
  std::size_t rule_index = 0;                // with `remote`: its index in snapshot->compiled
  std::vector<backend::redis::RemoteLease> remote_leases;  // give back with Store::release
};

// What the frontend does with a request.
struct Verdict {
  enum class Kind {
    kForward,  // proxy to route->upstream, after `delay`
    kRespond,  // answer locally with status/body (a route with `respond`), after `delay`
    kReject,   // a rule denied it: answer status/body
    kNoRoute,  // no route matched: 404
  };
  Kind kind = Kind::kNoRoute;
  core::Nanos delay = 0;
  int status = 0;
  std::string body;
  // Response header fields to add (RateLimit-Policy, RateLimit, Retry-After, X-RateLimit-*).
  std::vector<std::pair<std::string, std::string>> headers;
  // Concurrency permits held by this request: keep them until the response is complete.
  local::Leases leases;
  // The client address the keys used: the peer, or from X-Forwarded-For / Forwarded when the
  // peer is a trusted proxy.
  std::string client;
  std::shared_ptr<const Snapshot> snapshot;  // keeps `route` and its upstream alive
  const CompiledRoute* route = nullptr;
  // Set when the route has rules kept in Redis and the local ones allowed: the frontend asks
  // its loop's backend::redis::Store, then Engine::finish() turns the answer into the verdict.
  std::optional<backend::redis::Query> remote;
  // Concurrency permits held in Redis: give them back (Store::release) when the response is done.
  std::vector<backend::redis::RemoteLease> remote_leases;
  // For finish(): each enforce rule's decision so far, and the local keys' combined decision.
  std::vector<std::optional<core::Decision>> each;
  std::vector<std::size_t> remote_rules;  // the `enforce` index of each `remote` query item
  core::Decision local_decision{true};
};

// Thread-safe: decide() from any number of event loops while apply() swaps rule sets.
class Engine {
 public:
  // Throws std::invalid_argument with the errors when `rules` is invalid.
  Engine(config::RuleSet rules, core::Nanos now);

  // Validates `rules` in full; on any error returns them and changes nothing. Otherwise swaps
  // it in: limits whose rule name and spec are unchanged keep their tables; a rule whose
  // limit changed only in rate/burst/etc. (same algorithm, same memory) keeps its keys'
  // state and retunes them; others start empty. Requests in flight keep their snapshot.
  std::vector<std::string> apply(config::RuleSet rules, core::Nanos now);

  std::shared_ptr<const Snapshot> snapshot() const { return current_.load(); }

  Verdict decide(const RequestView& request, core::Nanos now) const;
  // Completes a verdict whose `remote` part the Redis backend has answered.
  Verdict finish(Verdict pending, backend::redis::Answer answer) const;

  // One key against a configured rule by name (route label "-" in metrics). A delay rule
  // waits up to its max_wait; others decide in reject mode.
  CheckResult check(std::string_view rule, std::string_view key, std::int64_t cost,
                    core::Nanos now) const;
  // Completes a check whose `remote` part the Redis backend has answered.
  CheckResult finish_check(CheckResult pending, backend::redis::Answer answer) const;

  // One key against an inline limit spec ("gcra:rate=10/s,burst=5"): its table is made on
  // first use and shared by every later check with the same canonical spec (at most
  // kMaxInlineLimits of them, each of min(memory, 16 MiB)).
  CheckResult check_inline(std::string_view limit_spec, std::string_view key, std::int64_t cost,
                           core::Nanos max_wait, core::Nanos now);
  static constexpr std::size_t kMaxInlineLimits = 256;

  // Prometheus text for the rules: per rule and route counters, per limit table stats.
  void write_metrics(std::string& out) const;

 private:
  void conclude(Verdict& v, const core::Decision& total) const;

  std::atomic<std::shared_ptr<const Snapshot>> current_;
  std::mutex inline_mutex_;
  std::map<std::string, std::shared_ptr<local::Policy>, std::less<>> inline_;
};

}  // namespace sluice::engine
