// LimitSet (sluice/local/limit_set.hpp): check all limits, commit all or none.
#include "sluice/local/limit_set.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

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

namespace {

// One limit's decided, uncommitted step, typed by its limit.
template <class T>
struct PendingOf;
template <class... L>
struct PendingOf<std::variant<L...>> {
  using type = std::variant<typename L::Pending...>;
};

}  // namespace

core::Decision LimitSet::decide(std::string_view key, core::Nanos now, std::int64_t cost) {
  using AnyPending = PendingOf<AnyLimit>::type;
  // Phase one: every limit decides on its current state; nothing is written. Each limit keeps
  // its states in its own map, so one limit's pending step stays valid while others decide.
  std::vector<AnyPending> pending;
  pending.reserve(limits_.size());
  AllMustPass total;
  bool changes_on_denial = false;
  for (auto& any : limits_) {
    std::visit(
        [&](auto& limit) {
          auto p = limit.decide(key, now, cost, max_wait_);
          total.add(p.step.decision);
          changes_on_denial = p.step.commit_on_denial;
          pending.emplace_back(std::move(p));
        },
        any);
  }
  // Phase two: all allowed, so all commit. A single limit may also change its state on a
  // denial, as its reference does (x/time/rate's cancelled reservation); with several, a
  // denial charges none.
  if (total.allowed() || (limits_.size() == 1 && changes_on_denial)) {
    for (std::size_t i = 0; i < limits_.size(); ++i) {
      std::visit(
          [&](auto& limit) {
            using P = typename std::decay_t<decltype(limit)>::Pending;
            limit.commit(std::get<P>(pending[i]), now);
          },
          limits_[i]);
    }
  }
  return total.result();
}

}  // namespace sluice::local
