// Several limits decided as one request, nginx's two phases: check every limit, then commit
// all of them only if all allow, so a denial charges none (lua-resty's uncommit, done right).
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/core/decision.hpp"
#include "sluice/local/keyed_limit.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::local {

// The combined decision: allowed iff all allow; delay is the longest wait among them;
// remaining the smallest; retry_after (on denial) the longest among the limits that denied.
class LimitSet {
 public:
  // `max_wait` is the caller's patience (0: reject mode; kForever: wait as long as needed).
  LimitSet(const std::vector<spec::LimitSpec>& specs, core::Nanos max_wait);

  core::Decision decide(std::string_view key, core::Nanos now, std::int64_t cost);

  std::size_t size() const { return limits_.size(); }

 private:
  using AnyLimit = std::variant<KeyedLimit<core::TokenBucket>, KeyedLimit<core::Gcra>,
                                KeyedLimit<core::LeakyBucket>, KeyedLimit<core::FixedWindow>,
                                KeyedLimit<core::SlidingLog>, KeyedLimit<core::SlidingWindow>,
                                KeyedLimit<core::SmoothBursty>, KeyedLimit<core::SmoothWarmup>,
                                KeyedLimit<core::UniformQueue>, KeyedLimit<core::Concurrency>>;
  std::vector<AnyLimit> limits_;
  core::Nanos max_wait_;
};

}  // namespace sluice::local
