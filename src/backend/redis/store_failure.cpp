// Store's failure policies (sluice/backend/redis/store.hpp): what a part whose script call
// failed (or was never sent: the breaker open) answers, rule by rule: fail-open, fail-closed or
// the local fallback; and the answers of a rule kept in Redis when no store is configured.
#include "sluice/backend/redis/store.hpp"
#include "sluice/local/combined_decision.hpp"
#include "sluice/table/key_hash.hpp"
#include "store_parts.hpp"

namespace sluice::backend::redis {

void Store::fail_part(const Part& p, core::Nanos now) {
  // The lease expires in Redis by itself; a renewal that failed is tried again at the next.
  if (p.kind == RequestKind::kRelease || p.kind == RequestKind::kRenew) return;
  if (p.kind == RequestKind::kTake) {
    auto it = pools_.find(key_of(p.target));
    if (it == pools_.end()) return;
    Pool& pool = it->second;
    pool.taking = false;
    while (!pool.waiting.empty()) {
      auto job = std::move(pool.waiting.front());
      pool.waiting.pop_front();
      job->each[0] = on_failure(job->query.items[0], job->query.cost, now, job->source);
      finish(job);
    }
    return;
  }
  if (redis_only(p.kind)) {  // a look, a reset or a settlement is Redis's answer or none
    for (int i : p.items) p.job->each[static_cast<std::size_t>(i)] = core::overflowed();
    p.job->source = Source::kFailClosed;
    if (p.job->settlement) log_lost_settlement(p.job->query.items.front().limit->name(), now);
    if (--p.job->parts_left == 0) finish(p.job);
    return;
  }
  for (int i : p.items) {
    const auto idx = static_cast<std::size_t>(i);
    p.job->each[idx] = on_failure(p.job->query.items[idx], p.job->query.cost, now, p.job->source);
  }
  if (--p.job->parts_left == 0) finish(p.job);
}

core::Decision Store::on_failure(const QueryItem& item, std::int64_t cost, core::Nanos now,
                                 Source& source) {
  if (item.limit->options().on_failure == FailurePolicy::kOpen)
    log_fail_open(item.limit->name(), now);
  return decide_on_failure(item, item.cost_in(cost), now, options_.breaker.open_for, source);
}

core::Decision decide_on_failure(const QueryItem& item, std::int64_t cost, core::Nanos now,
                                 core::Nanos retry_after, Source& source) {
  const auto mark = [&](Source s) {
    if (source == Source::kRedis || source == Source::kLease) source = s;
  };
  switch (item.limit->options().on_failure) {
    case FailurePolicy::kOpen:
      mark(Source::kFailOpen);
      return core::Decision{true, 0, -1, 0, 0, -1};
    case FailurePolicy::kClosed:
      mark(Source::kFailClosed);
      return core::denied(retry_after, 0, 0, -1);
    case FailurePolicy::kLocal: {
      mark(Source::kLocal);
      const local::TableLimit& fallback = item.limit->fallback()->limits().front();
      local::LimitAsk ask{&fallback.table, table::hash_key(item.key), item.max_wait};
      ask.count_denied = item.limit->options().count_denied;
      local::EachDecision each;
      local::Leases leases;
      // A calendar window counts in the calendar's Unix time, not the loop's steady clock.
      const core::Nanos at = item.limit->calendar() != nullptr ? item.unix_now : now;
      return local::decide_all(std::span(&ask, 1), at, cost, std::span(&each, 1), leases);
    }
  }
  return core::Decision{true};
}

Answer answer_without_store(const Query& query, core::Nanos now) {
  local::AllMustPass fold;
  Answer answer;
  if (redis_only(query.kind)) {
    answer.each.assign(query.items.size(), core::overflowed());
    answer.combined = core::overflowed();
    answer.source = Source::kFailClosed;
    return answer;
  }
  for (const auto& item : query.items) {
    answer.each.push_back(decide_on_failure(item, item.cost_in(query.cost), now,
                                            core::kNanosPerSecond, answer.source));
    fold.add(answer.each.back());
  }
  answer.combined = fold.result();
  return answer;
}

}  // namespace sluice::backend::redis
