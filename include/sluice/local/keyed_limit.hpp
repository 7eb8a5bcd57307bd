// One limit (algorithm + parameters) applied per key: the states of every key it has seen,
// kept in process. Deciding and committing are separate so several limits can act as one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sluice/core/algorithm.hpp"

namespace sluice::local {

// Not thread-safe: the replay and single-threaded callers own one; the concurrent, bounded
// table replaces the map for the daemon.
template <core::Algorithm A>
class KeyedLimit {
 public:
  using Params = typename A::Params;
  using State = typename A::State;
  using StepT = decltype(A::decide(std::declval<const Params&>(), std::declval<const State&>(),
                                   core::Nanos{}, std::int64_t{}, core::Nanos{}));

  explicit KeyedLimit(Params params) : params_(std::move(params)) {}

  // A pending decision: the step and where to commit it. `slot` is null for a key not yet
  // stored; its state is created only if the request is committed, so a key denied on its
  // first request stays unknown (the reference would not have created it either).
  struct Pending {
    StepT step;
    State* slot = nullptr;
    std::string_view key;
  };

  Pending decide(std::string_view key, core::Nanos now, std::int64_t cost, core::Nanos max_wait) {
    auto it = states_.find(key);
    if (it != states_.end()) {
      return Pending{A::decide(params_, it->second, now, cost, max_wait), &it->second, key};
    }
    const State fresh = A::start(params_, now);
    return Pending{A::decide(params_, fresh, now, cost, max_wait), nullptr, key};
  }

  void commit(Pending& pending, core::Nanos now) {
    if (pending.slot == nullptr) {
      auto [it, inserted] = states_.emplace(std::string(pending.key), A::start(params_, now));
      pending.slot = &it->second;
    }
    core::commit<A>(params_, *pending.slot, pending.step);
  }

  // Live parameter change: every key's state carried over as the algorithm's reference does.
  void retune(Params params, core::Nanos now) {
    for (auto& [key, state] : states_) state = A::retune(params_, params, state, now);
    params_ = std::move(params);
  }

  const Params& params() const { return params_; }
  std::size_t keys() const { return states_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  Params params_;
  std::unordered_map<std::string, State, Hash, std::equal_to<>> states_;
};

}  // namespace sluice::local
