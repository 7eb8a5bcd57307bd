// limit_fields (limit_fields.hpp).
#include "limit_fields.hpp"

namespace sluice::server {

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
    f.quota = q.quota;
    f.window_seconds = q.window_seconds;
    f.burst = q.burst;
    f.concurrent = q.concurrent;
    f.remaining = d.remaining < 0 ? 0 : d.remaining;
    if (q.concurrent) {
      f.reset_seconds = -1;
    } else if (!d.allowed && d.retry_after != core::kNever) {
      f.reset_seconds = core::ceil_seconds(d.retry_after);
    } else {
      f.reset_seconds = core::ceil_seconds(d.reset_after);
    }
    fields.push_back(f);
  }
}

core::Nanos retry_after(const Outcome& out) {
  const core::Decision& d = out.total;
  if (out.verdict != Verdict::kDeny || out.missing_key) return -1;
  if (d.allowed || d.retry_after == core::kNever || d.retry_after <= 0) return -1;
  return d.retry_after;
}

}  // namespace sluice::server
