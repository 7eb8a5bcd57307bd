// settle (sluice/engine/settle.hpp) and Loop::settle (loop.hpp): each settlement the decision
// recorded, applied to its rule's table here, or to Redis through the loop's store in the
// background (the response never waits for it).
#include "sluice/engine/settle.hpp"

#include <atomic>

#include "internal.hpp"
#include "sluice/backend/redis/store.hpp"
#include "sluice/core/settle.hpp"
#include "sluice/core/status_set.hpp"
#include "sluice/engine/loop.hpp"
#include "sluice/local/settle.hpp"

namespace sluice::engine {
namespace {

using detail::OutcomeAccess;
using Where = detail::Settlement::Where;

bool counts(const config::Rule& rule, int status) {
  return rule.count_if_status.empty() || core::status_listed(rule.count_if_status, status);
}

// What the response costs under `rule`, given what was reserved; `counter` is the one of
// RuleCounters that says which answer it was.
std::int64_t charge(const config::Rule& rule, std::int64_t reserved, int status,
                    const HeaderLookup& header,
                    std::atomic<std::uint64_t> RuleCounters::*& counter) {
  counter = &RuleCounters::settled_nothing;
  if (!counts(rule, status)) return 0;
  counter = &RuleCounters::settled_reserve;
  if (rule.cost_from.empty()) return reserved;
  const auto value = header(rule.cost_from);
  const auto stated = value ? core::parse_stated_cost(*value) : std::nullopt;
  if (!stated) return reserved;
  counter = &RuleCounters::settled_stated;
  return *stated;
}

// A Redis rule's query item in `out` (its key): the one that answers `applied`.
const backend::redis::QueryItem* remote_item_of(Outcome& out, std::uint32_t applied) {
  const auto& remote = detail::remote_of(out);
  if (!remote) return nullptr;
  for (const detail::RemotePart& part : remote->parts) {
    for (std::size_t k = 0; k < part.applied.size(); ++k) {
      if (part.applied[k] == applied) return &part.query.items[k];
    }
  }
  return nullptr;
}

}  // namespace

namespace detail {

void keep_remote_settlements(Outcome& out) {
  for (const RemotePart& part : remote_of(out)->parts) {
    for (std::size_t k = 0; k < part.applied.size(); ++k) {
      const Applied& a = out.applied[part.applied[k]];
      if (a.rule == nullptr || !a.rule->settles()) continue;
      Where where = Where::kRedis;
      if (part.source != backend::redis::Source::kRedis) {
        // Redis did not answer: only a local fallback charged the reserve (fail-open counted
        // nothing, so there is nothing to settle).
        const auto& in_redis = compiled_of(a).remote;
        if (in_redis->options().on_failure != backend::redis::FailurePolicy::kLocal) continue;
        where = Where::kFallback;
      }
      OutcomeAccess::settle(out).push_back(
          {static_cast<std::uint32_t>(part.applied[k]), where, a.rule->reserved(), 0, 0});
    }
  }
}

}  // namespace detail

bool settles(const Outcome& out) { return !OutcomeAccess::settle(out).empty(); }

std::vector<std::string_view> cost_headers(const Outcome& out) {
  std::vector<std::string_view> names;
  for (const auto& s : OutcomeAccess::settle(out)) {
    const config::Rule* rule = out.applied[s.applied].rule;
    if (rule != nullptr && !rule->cost_from.empty()) names.push_back(rule->cost_from);
  }
  return names;
}

void Loop::settle(Outcome& out, int status, const HeaderLookup& header, core::Nanos now) {
  auto& list = OutcomeAccess::settle(out);
  for (const detail::Settlement& s : list) {
    const Applied& a = out.applied[s.applied];
    const CompiledLimit& limit = detail::compiled_of(a);
    if (a.rule == nullptr) continue;
    std::atomic<std::uint64_t> RuleCounters::*counter = nullptr;
    const std::int64_t delta =
        core::settle_delta(s.reserved, charge(*a.rule, s.reserved, status, header, counter));
    RuleCounters* counters = detail::counters_of(a);
    const backend::redis::QueryItem* item = remote_item_of(out, s.applied);
    if (s.where == Where::kTable && limit.table) {
      local::settle(limit.table->table, {s.bucket, s.fingerprint}, now + limit.shift(now), delta);
    } else if (s.where == Where::kFallback && item != nullptr) {
      // The fallback decided a calendar window on the ask's Unix time (decide_on_failure).
      const core::Nanos at = limit.remote->calendar() != nullptr ? item->unix_now : now;
      local::settle(limit.remote->fallback()->limits().front().table, table::hash_key(item->key),
                    at, delta);
    } else if (s.where == Where::kRedis && item != nullptr && delta != 0) {
      settle_in_redis(out, *item, delta, counters);
    }
    if (counters != nullptr) (counters->*counter).fetch_add(1, std::memory_order_relaxed);
  }
  list.clear();
}

void Loop::settle_in_redis(Outcome& out, const backend::redis::QueryItem& item, std::int64_t delta,
                           RuleCounters* counters) {
  const auto lost = [counters] {
    if (counters != nullptr) counters->settled_lost.fetch_add(1, std::memory_order_relaxed);
  };
  if (store_ == nullptr) {  // no store on this loop (a redis url added after start)
    lost();
    return;
  }
  // The item as decided (its calendar window's Unix time too), charged the delta alone: the
  // reserve was admission's. The snapshot keeps the rule's counters alive until Redis
  // answers, whatever `out` does.
  backend::redis::QueryItem settled = item;
  settled.cost = 0;
  settled.max_wait = 0;
  store_->settle(std::move(settled), delta,
                 [snapshot = OutcomeAccess::snapshot(out), lost](bool applied) {
                   if (!applied) lost();
                 });
}

}  // namespace sluice::engine
