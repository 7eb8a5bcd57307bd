// What a limit promises a client, in the terms of the RateLimit-Policy field, fixed when the
// limit is compiled: q units per window of w seconds, and for limits that refill continuously
// the most that can pass at once. docs/configuration.md defines each field per algorithm.
#pragma once

#include <cstdint>

#include "sluice/spec/limit_spec.hpp"

namespace sluice::engine {

struct Quota {
  // The policy item: q per w seconds. Windows: the limit per window. Limits that refill
  // continuously (token-bucket, gcra, leaky-bucket, smooth-*, queue): the sustained rate as
  // written (rate=1000/s is q=1000;w=1, rate=30/60s is q=30;w=60), so q/w is the rate.
  std::int64_t quota = 0;
  std::int64_t window_seconds = 0;  // 0: not time-based (concurrency)
  // Continuous refill: the capacity, the most that can pass at once from full (the policy
  // item's q covers it: server/common/limit_fields). 0 for windows and concurrency.
  std::int64_t burst = 0;
  // The seconds a full refill takes (the RateLimit field's t when nothing is left); windows:
  // the window.
  std::int64_t refill_seconds = 0;
  bool concurrent = false;  // qu="concurrent-requests"
};

Quota quota_of(const spec::LimitSpec& spec);

}  // namespace sluice::engine
