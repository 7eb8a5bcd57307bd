// settle (sluice/engine/settle.hpp): each settlement the decision recorded, applied to its
// rule's table (local rules only: check-config refuses cost_from and count_if in Redis).
#include "sluice/engine/settle.hpp"

#include <atomic>

#include "internal.hpp"
#include "sluice/core/settle.hpp"
#include "sluice/core/status_set.hpp"
#include "sluice/local/settle.hpp"

namespace sluice::engine {
namespace {

using detail::OutcomeAccess;

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

}  // namespace

bool settles(const Outcome& out) { return !OutcomeAccess::settle(out).empty(); }

std::vector<std::string_view> cost_headers(const Outcome& out) {
  std::vector<std::string_view> names;
  for (const auto& s : OutcomeAccess::settle(out)) {
    const config::Rule* rule = out.applied[s.applied].rule;
    if (rule != nullptr && !rule->cost_from.empty()) names.push_back(rule->cost_from);
  }
  return names;
}

void settle(Outcome& out, int status, const HeaderLookup& header, core::Nanos now) {
  auto& list = OutcomeAccess::settle(out);
  for (const detail::Settlement& s : list) {
    const Applied& a = out.applied[s.applied];
    const CompiledLimit& limit = detail::compiled_of(a);
    if (a.rule == nullptr || !limit.table) continue;
    std::atomic<std::uint64_t> RuleCounters::*counter = nullptr;
    const std::int64_t delta =
        core::settle_delta(s.reserved, charge(*a.rule, s.reserved, status, header, counter));
    local::settle(limit.table->table, {s.bucket, s.fingerprint}, now + limit.shift(now), delta);
    if (RuleCounters* c = detail::counters_of(a))
      (c->*counter).fetch_add(1, std::memory_order_relaxed);
  }
  list.clear();
}

}  // namespace sluice::engine
