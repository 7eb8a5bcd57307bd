// quota_of (quota.hpp): each algorithm's parameters as RateLimit-Policy items.
#include "sluice/engine/quota.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sluice/core/rate.hpp"

namespace sluice::engine {
namespace {

std::int64_t seconds_up(double s) {
  if (!(s > 0)) return 1;
  if (s > 1e15) return static_cast<std::int64_t>(1e15);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(s - 1e-9)));
}

std::int64_t seconds_up(core::Nanos d) { return seconds_up(static_cast<double>(d) / 1e9); }

// The spec's `rate=` as written, from its canonical text.
core::Rate written_rate(const spec::LimitSpec& spec) {
  std::string_view rest = spec.canonical;
  const auto colon = rest.find(':');
  rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view param = rest.substr(0, comma);
    if (param.starts_with("rate=")) {
      if (auto r = core::parse_rate(param.substr(5))) return *r;
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return core::Rate{1, core::kNanosPerSecond};
}

// q and w with q/w the rate and w whole seconds: the period scaled to the least whole number
// of seconds (3/250ms is q=12;w=1, 1/1500ms is q=2;w=3); a period that scales past a day
// becomes the rate per second, rounded.
void rate_item(const core::Rate& r, Quota& q) {
  const core::Nanos period = r.period;
  const core::Nanos g = std::gcd(period, core::kNanosPerSecond);
  const std::int64_t scale = core::kNanosPerSecond / g;  // periods in a whole number of seconds
  const std::int64_t seconds = period / g;               // = period * scale / 1 s
  if (seconds <= 86400 && r.count <= (INT64_C(1) << 40) / scale) {
    q.quota = r.count * scale;
    q.window_seconds = seconds;
  } else {
    q.quota = std::max<std::int64_t>(1, std::llround(r.per_second()));
    q.window_seconds = 1;
  }
}

}  // namespace

Quota quota_of(const spec::LimitSpec& spec) {
  Quota q;
  std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, core::FixedWindow::Params> ||
                      std::is_same_v<P, core::SlidingWindow::Params> ||
                      std::is_same_v<P, core::SlidingLog::Params>) {
          q.quota = p.limit;
          q.window_seconds = q.refill_seconds = seconds_up(p.window);
        } else if constexpr (std::is_same_v<P, core::Concurrency::Params>) {
          q.quota = p.limit;
          q.concurrent = true;
        } else {
          rate_item(written_rate(spec), q);
          if constexpr (std::is_same_v<P, core::TokenBucket::Params>) {
            q.burst = p.burst;
            q.refill_seconds = seconds_up(static_cast<double>(p.burst) / p.per_second);
          } else if constexpr (std::is_same_v<P, core::Gcra::Params>) {
            q.burst = p.burst + 1;
            q.refill_seconds = seconds_up(p.tolerance);
          } else if constexpr (std::is_same_v<P, core::LeakyBucket::Params>) {
            q.burst = p.burst + 1;
            q.refill_seconds = seconds_up(static_cast<double>(p.burst + 1) * 1000.0 /
                                          static_cast<double>(p.rate_milli));
          } else if constexpr (std::is_same_v<P, core::SmoothBursty::Params> ||
                               std::is_same_v<P, core::SmoothWarmup::Params>) {
            q.burst = static_cast<std::int64_t>(std::max(1.0, std::floor(p.max_permits)));
            q.refill_seconds = seconds_up(static_cast<double>(q.burst) / p.permits_per_second);
          } else {  // the queue: one at a time, one spacing apart
            q.burst = 1;
            q.refill_seconds = seconds_up(1.0 / p.count);
          }
        }
      },
      spec.params);
  return q;
}

}  // namespace sluice::engine
