// A limit whose parameters come with each decision, over one state per key whatever the
// parameters: redis-cell's CL.THROTTLE keeps one TAT per key, folly's BasicDynamicTokenBucket
// takes its rate at each call. The table's own parameters are never decided with.
#pragma once

#include <cstddef>
#include <optional>

#include "sluice/core/algorithm.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/table/keyed_table.hpp"

namespace sluice::local {

template <core::Algorithm A>
class DynamicLimit {
 public:
  // `placeholder`: parameters the table is made with (it needs some), never decided with.
  DynamicLimit(const typename A::Params& placeholder, std::size_t budget_bytes)
      : table_(placeholder, budget_bytes) {}

  // Decides and commits one request under `params`. nullopt when the key is new and every
  // slot of its bucket is held at this instant (try again). Thread-safe.
  std::optional<core::Decision> decide(const table::KeyHash& key, const typename A::Params& params,
                                       core::Nanos now, std::int64_t cost, core::Nanos max_wait) {
    auto locked = table_.lock(key, now);
    if (!locked) return std::nullopt;
    const auto step = A::decide(params, locked->state(), locked->now(), cost, max_wait);
    if (step.decision.allowed || step.commit_on_denial) {
      core::commit<A>(params, locked->state(), step);
    }
    return step.decision;
  }

  table::TableStats stats() const { return table_.stats(); }

 private:
  table::KeyedTable<A> table_;
};

}  // namespace sluice::local
