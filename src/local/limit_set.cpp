// LimitSet (sluice/local/limit_set.hpp): check all limits, commit all or none.
#include "sluice/local/limit_set.hpp"

#include <algorithm>
#include <tuple>

namespace sluice::local {
namespace {

// Alternative I of AnyLimit wraps alternative I of AlgorithmParams.
template <class Variant, std::size_t I = 0>
Variant make_limit(const spec::AlgorithmParams& params) {
  if constexpr (I + 1 < std::variant_size_v<spec::AlgorithmParams>) {
    if (params.index() != I) return make_limit<Variant, I + 1>(params);
  }
  return Variant(std::in_place_index<I>, std::get<I>(params));
}

// Folds one limit's decision into the combined one.
void combine(core::Decision& total, const core::Decision& d, bool first) {
  if (first) {
    total = d;
    return;
  }
  total.allowed = total.allowed && d.allowed;
  total.delay = std::max(total.delay, d.delay);
  if (d.remaining >= 0) {
    total.remaining = total.remaining < 0 ? d.remaining : std::min(total.remaining, d.remaining);
  }
  total.reset_after = std::max(total.reset_after, d.reset_after);
  if (d.limit >= 0) total.limit = total.limit < 0 ? d.limit : std::min(total.limit, d.limit);
}

}  // namespace

LimitSet::LimitSet(const std::vector<spec::LimitSpec>& specs, core::Nanos max_wait)
    : max_wait_(max_wait) {
  static_assert(std::variant_size_v<AnyLimit> == std::variant_size_v<spec::AlgorithmParams>);
  limits_.reserve(specs.size());
  for (const auto& s : specs) {
    limits_.push_back(make_limit<AnyLimit>(s.params));
  }
}

core::Decision LimitSet::decide(std::string_view key, core::Nanos now, std::int64_t cost) {
  if (limits_.size() == 1) {
    // The common case, and the one where a reference may change its state on a denial.
    return std::visit(
        [&](auto& limit) {
          auto pending = limit.decide(key, now, cost, max_wait_);
          if (pending.step.decision.allowed || pending.step.commit_on_denial) {
            limit.commit(pending, now);
          }
          return pending.step.decision;
        },
        limits_.front());
  }

  // Phase one: every limit decides on its current state, nothing is written.
  core::Decision total;
  core::Nanos retry = 0;
  bool never = false;
  bool all_allowed = true;
  for (std::size_t i = 0; i < limits_.size(); ++i) {
    std::visit(
        [&](auto& limit) {
          const auto pending = limit.decide(key, now, cost, max_wait_);
          const core::Decision& d = pending.step.decision;
          combine(total, d, i == 0);
          if (!d.allowed) {
            all_allowed = false;
            if (d.retry_after == core::kNever) never = true;
            retry = std::max(retry, d.retry_after);
          }
        },
        limits_[i]);
  }
  if (!all_allowed) {
    total.delay = 0;
    total.retry_after = never ? core::kNever : retry;
    return total;
  }
  // Phase two: all allowed, so all commit. Deciding again on the same state is deterministic
  // and keeps Pending (which may point into a table) from outliving phase one.
  for (auto& any : limits_) {
    std::visit(
        [&](auto& limit) {
          auto pending = limit.decide(key, now, cost, max_wait_);
          limit.commit(pending, now);
        },
        any);
  }
  total.retry_after = 0;
  return total;
}

}  // namespace sluice::local
