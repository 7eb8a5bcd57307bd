// An outcome as the HTTP rate-limit fields see it (RateLimit-Policy, RateLimit, X-RateLimit-*,
// Retry-After): the values each limit reports, for the gateway and the check API alike;
// proto/http writes them. docs/configuration.md ("Response fields") defines q, w, r and t.
#pragma once

#include <absl/container/inlined_vector.h>

#include "sluice/core/time.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/proto/http/ratelimit_fields.hpp"

namespace sluice::server {

using LimitFields = absl::InlinedVector<proto::http::LimitField, engine::kInlineLimits>;

// One policy item and one status item per enforced limit that decided, in order, with r
// within q (docs/configuration.md, "Response fields", has the table per algorithm). A window
// is q per window; a limit that refills continuously is q = rate * w with w its whole refill,
// so q/w is the rate and q covers the burst. r is what is left after this request (a refused
// request is charged nowhere, so the limits that allowed it report what they had). t (w in
// draft-12) is the effective window of draft-11 and -12, the seconds within which no more than
// r can be used, which is the time until more quota comes: a window's end, a bucket's next
// unit (full: one unit's time); for a limit that refused the request, its retry time, the same
// point in time as Retry-After.
void limit_fields(const engine::Outcome& out, LimitFields& fields);

// Which fields the rules ask for (`headers:`), and in which draft's syntax.
proto::http::FieldChoice field_choice(const config::RuleSet& rules);

// The Retry-After of an outcome: its retry time when refused and known, else -1.
core::Nanos retry_after(const engine::Outcome& out);

}  // namespace sluice::server
