// AIMD, as Netflix concurrency-limits' AIMDLimit defines it (concurrency-limits-core
// limit/AIMDLimit.java): +1 per sample while the limit is in use, x backoff_ratio on a drop
// or an RTT over the timeout. A loss-based limit: it ignores latency below the timeout.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sluice/adaptive/adaptive_limit.hpp"

namespace sluice::adaptive {

struct Aimd {
  // AIMDLimit.Builder's defaults.
  struct Params {
    int min_limit = 20;
    int initial_limit = 20;
    int max_limit = 200;
    double backoff_ratio = 0.9;
    Nanos timeout = 5 * core::kNanosPerSecond;
  };
  struct State {
    int limit = 0;  // AbstractLimit.limit: the initial limit is not clamped, as there
  };
  static_assert(sizeof(State) == 4 && std::is_trivially_copyable_v<State>);

  static State start(const Params& p, Nanos, std::uint64_t) { return State{p.initial_limit}; }

  // AIMDLimit._update: the drop test comes first, so a dropped sample never grows the limit;
  // growth needs half the limit in use ("inflight * 2 >= currentLimit").
  static std::int64_t update(const Params& p, State& s, const Sample& x) {
    if (x.outcome == Outcome::kIgnored) return s.limit;  // onIgnore samples nothing
    int current = s.limit;
    if (x.outcome == Outcome::kDropped || x.rtt > p.timeout) {
      current = static_cast<int>(current * p.backoff_ratio);
    } else if (x.in_flight * 2 >= current) {
      current = current + 1;
    }
    s.limit = std::min(p.max_limit, std::max(p.min_limit, current));
    return s.limit;
  }

  static std::int64_t advance(const Params&, State& s, Nanos) { return s.limit; }
  static Nanos next_event(const State&) { return kNoEvent; }
  static std::int64_t limit(const State& s) { return s.limit; }

  // The builder's checks (backoffRatio in [0.5, 1.0), timeout > 0); initial outside
  // [min, max] is only a warning there, so it is allowed here too.
  static core::Expected<Params> validate(const Params& p) {
    if (!(p.backoff_ratio >= 0.5 && p.backoff_ratio < 1.0)) {
      return core::make_error("aimd: backoff_ratio must be in [0.5, 1.0)");
    }
    if (p.timeout <= 0) return core::make_error("aimd: timeout must be positive");
    if (p.min_limit < 1 || p.max_limit < p.min_limit) {
      return core::make_error("aimd: need 1 <= min_limit <= max_limit");
    }
    return p;
  }
};
static_assert(AdaptiveLimit<Aimd>);

}  // namespace sluice::adaptive
