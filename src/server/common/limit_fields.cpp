// limit_fields (limit_fields.hpp).
#include "limit_fields.hpp"

#include <algorithm>
#include <cstdint>

namespace sluice::server {
namespace {

// A limit that refills continuously (rate R = quota/window_seconds, capacity B = burst) as one
// policy item: w the least whole number of the rate's own windows that refills the whole
// capacity, and q = R * w. So q/w is the rate exactly and q >= B, which keeps r (what the
// bucket holds, at most B) within q. Falls back to q=B, w=refill if R * w leaves 64 bits.
void continuous_policy(const engine::Quota& q, proto::http::LimitField& f) {
  const std::int64_t window = q.window_seconds > 0 ? q.window_seconds : 1;
  const std::int64_t refill = q.refill_seconds > 0 ? q.refill_seconds : 1;
  std::int64_t periods = (refill + window - 1) / window;
  if (q.quota > 0) periods = std::max(periods, (q.burst + q.quota - 1) / q.quota);
  if (q.quota > 0 && periods <= INT64_MAX / q.quota && periods <= INT64_MAX / window) {
    f.quota = periods * q.quota;
    f.window_seconds = periods * window;
  } else {
    f.quota = q.burst;
    f.window_seconds = refill;
  }
}

// Whole seconds, rounded up, one unit takes to come back at q per w: the most a client waits
// for more quota from a limit that refills continuously, and so its effective window.
std::int64_t unit_seconds(const proto::http::LimitField& f) {
  if (f.quota <= 0) return f.window_seconds;
  return (f.window_seconds + f.quota - 1) / f.quota;
}

}  // namespace

using engine::Applied;
using engine::Outcome;
using engine::Quota;
using engine::Verdict;

void limit_fields(const Outcome& out, LimitFields& fields) {
  fields.clear();
  for (const Applied& a : out.applied) {
    if (!a.enforced) continue;
    const Quota& q = a.limit.quota;
    const core::Decision& d = a.decision;
    proto::http::LimitField f;
    f.name = a.limit.name;
    const bool continuous = q.burst > 0;
    if (continuous) {
      continuous_policy(q, f);
    } else {
      f.quota = q.quota;
      f.window_seconds = q.window_seconds;
    }
    f.concurrent = q.concurrent;
    f.known = !a.unmetered;
    // r is what is left of q: at least 0, at most q (a limit never holds more than its
    // capacity, and q is at least that).
    f.remaining = std::clamp<std::int64_t>(d.remaining, 0, f.quota);
    if (q.concurrent) {
      f.reset_seconds = -1;  // more comes when a request in flight ends: not a time
    } else if (!d.allowed && d.retry_after != core::kNever) {
      f.reset_seconds = core::ceil_seconds(d.retry_after);
    } else if (continuous) {
      // The next unit; full, one unit after the first is spent (nothing refills before).
      const std::int64_t unit = unit_seconds(f);
      f.reset_seconds =
          d.reset_after > 0 ? std::min(core::ceil_seconds(d.reset_after), unit) : unit;
    } else {
      f.reset_seconds = core::ceil_seconds(d.reset_after);  // the window's end
    }
    fields.push_back(f);
  }
}

proto::http::FieldChoice field_choice(const config::RuleSet& rules) {
  return {rules.ratelimit_headers, rules.legacy_headers, rules.ratelimit_draft};
}

core::Nanos retry_after(const Outcome& out) {
  const core::Decision& d = out.total;
  if (out.verdict != Verdict::kDeny || out.missing_key) return -1;
  if (d.allowed || d.retry_after == core::kNever || d.retry_after <= 0) return -1;
  return d.retry_after;
}

}  // namespace sluice::server
