// What a limit promises a client, in the terms of the RateLimit-Policy field: a quota of q
// requests per window of w seconds, derived from each algorithm's parameters.
#pragma once

#include <cstdint>

#include "sluice/spec/limit_spec.hpp"

namespace sluice::engine {

struct Quota {
  std::int64_t quota = 0;           // q: requests that may pass at once from full
  std::int64_t window_seconds = 0;  // w: seconds to earn the quota back (0: not time-based)
  bool concurrent = false;          // qu="concurrent-requests"
};

// token-bucket: q=burst, w=burst/rate; gcra: q=burst+1, w=(burst+1)*interval; leaky-bucket:
// q=burst+1, w=(burst+1)/rate; windows: q=limit, w=window; Guava: q=stored maximum (at least
// 1), w=its refill time; queue: q=1, w=one spacing; concurrency: q=limit, concurrent.
// Windows are rounded up to whole seconds, at least 1.
Quota quota_of(const spec::AlgorithmParams& params);

}  // namespace sluice::engine
