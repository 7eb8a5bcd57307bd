// LimitSet (sluice/local/limit_set.hpp): check all limits, commit all or none.
#include "sluice/local/limit_set.hpp"

#include <algorithm>
#include <tuple>

#include "sluice/local/combined_decision.hpp"

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
  AllMustPass total;
  for (auto& any : limits_) {
    std::visit(
        [&](auto& limit) { total.add(limit.decide(key, now, cost, max_wait_).step.decision); },
        any);
  }
  if (!total.allowed()) return total.result();
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
  return total.result();
}

}  // namespace sluice::local
