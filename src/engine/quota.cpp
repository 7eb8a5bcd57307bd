// quota_of (quota.hpp): each algorithm's parameters as q and w.
#include "sluice/engine/quota.hpp"

#include <algorithm>
#include <cmath>

namespace sluice::engine {
namespace {

std::int64_t seconds_up(double s) {
  if (!(s > 0)) return 1;
  if (s > 1e15) return static_cast<std::int64_t>(1e15);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(s - 1e-9)));
}

std::int64_t seconds_up(core::Nanos d) { return seconds_up(static_cast<double>(d) / 1e9); }

}  // namespace

Quota quota_of(const spec::AlgorithmParams& params) {
  return std::visit(
      [](const auto& p) -> Quota {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, core::TokenBucket::Params>) {
          return {p.burst, seconds_up(static_cast<double>(p.burst) / p.per_second), false};
        } else if constexpr (std::is_same_v<P, core::Gcra::Params>) {
          return {p.burst + 1, seconds_up(p.tolerance), false};
        } else if constexpr (std::is_same_v<P, core::LeakyBucket::Params>) {
          return {p.burst + 1,
                  seconds_up(static_cast<double>(p.burst + 1) * 1000.0 /
                             static_cast<double>(p.rate_milli)),
                  false};
        } else if constexpr (std::is_same_v<P, core::FixedWindow::Params> ||
                             std::is_same_v<P, core::SlidingWindow::Params> ||
                             std::is_same_v<P, core::SlidingLog::Params>) {
          return {p.limit, seconds_up(p.window), false};
        } else if constexpr (std::is_same_v<P, core::SmoothBursty::Params> ||
                             std::is_same_v<P, core::SmoothWarmup::Params>) {
          const double q = std::max(1.0, std::floor(p.max_permits));
          return {static_cast<std::int64_t>(q), seconds_up(q / p.permits_per_second), false};
        } else if constexpr (std::is_same_v<P, core::UniformQueue::Params>) {
          return {1, seconds_up(1.0 / p.count), false};
        } else {
          return {p.limit, 0, true};
        }
      },
      params);
}

}  // namespace sluice::engine
