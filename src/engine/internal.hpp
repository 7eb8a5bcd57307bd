// What the engine's files share and frontends never see: compiling a snapshot, the Redis half
// of an outcome, and the deciders of each kind of ask.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/backend/redis/query.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/engine/snapshot.hpp"

namespace sluice::engine::detail {

// Builds the snapshot of `rules` (already validated), keeping `old`'s tables and counters
// where the rule is unchanged or only retuned. Errors: a table that cannot be made.
core::Expected<std::shared_ptr<Snapshot>> compile(config::RuleSet rules, const Snapshot* old,
                                                  core::Nanos now);

// Which decider concludes an outcome once Redis has answered.
enum class AskKind { kHttp, kRule, kInline, kThrottle };

// The part of an outcome kept in Redis.
struct Remote {
  AskKind kind = AskKind::kHttp;
  backend::redis::Query query;       // what is asked (sent by the loop's store)
  std::vector<std::size_t> applied;  // the `applied` index of each query item
  core::Decision local;              // the local limits' combined decision
  core::Nanos now = 0;               // when it was asked (for a failure policy's answer)
  std::vector<backend::redis::RemoteLease> leases;  // concurrency permits held in Redis
};

class LeaseBook;

// The deciders: each fills `out` (already reset, snapshot set) and says whether Redis is
// still to be asked; the conclusions run then, or after Redis has answered.
Progress start_http(const RequestView& r, core::Nanos now, Outcome& out);
void conclude_http(Outcome& out);

// One key against one limit (a rule's, or an inline one with no rule and no counters).
Progress start_one(const CompiledLimit& limit, const config::Rule* rule, RuleCounters* counters,
                   std::string_view key, std::int64_t cost, core::Nanos max_wait, core::Nanos now,
                   AskKind kind, Outcome& out);
// Counts, and keeps a concurrency permit for the caller in `book` (or as a Redis token).
void conclude_check(Outcome& out, core::Nanos now, LeaseBook& book);

backend::redis::FailurePolicy backend_policy(config::FailurePolicy p);

// The limit as Redis keeps it: a query item for `key`.
backend::redis::QueryItem remote_item(const CompiledLimit& limit, std::string key,
                                      core::Nanos max_wait);

}  // namespace sluice::engine::detail
