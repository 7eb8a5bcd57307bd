// The decision API (docs/admin-api.md, "Decision API"): the engine decides one key against a
// configured rule or an inline limit, and these handlers turn its Outcome into JSON and HTTP.
// No limiter arithmetic here.
//
//   POST /v1/check           one check {"rule"|"limit", "key", "cost", "max_wait"} -> 200 with
//                            the decision as JSON and the RateLimit headers; or a batch
//                            {"checks": [...]} (at most 1000) -> 200 {"results": [...]} in order
//   GET  /v1/check/{rule}?key=K[&cost=N]
//                            204 allowed, 429 denied, with the RateLimit headers (and
//                            Retry-After when denied), for nginx auth_request; a delay rule's
//                            wait is served by holding the reply
//   POST /v1/release         {"lease": TOKEN}: a concurrency permit a check handed out, back
//   DELETE /v1/leases/{TOKEN}  the same
#pragma once

#include <string>
#include <string_view>

#include "admin_reply.hpp"
#include "sluice/core/time.hpp"
#include "sluice/engine/loop.hpp"

namespace sluice::server {

// Set on a 204 from a dry-run rule that would have denied the request.
inline constexpr std::string_view kDryRunDeniedHeader = "Sluice-Dry-Run-Denied";
// Set on an allowed check of a concurrency rule: the permit's token and its TTL in seconds.
inline constexpr std::string_view kLeaseHeader = "Sluice-Lease";
inline constexpr std::string_view kLeaseTtlHeader = "Sluice-Lease-TTL";

// Durations go out in whole milliseconds, rounded up: a client that waits retry_after_ms is
// never early. (The key look-ups answer in the same units.)
std::int64_t ceil_ms(core::Nanos d);

// Rules kept in Redis are asked through `loop` (the admin loop's); their replies come through
// Reply::later.
Reply post_check(engine::Loop& loop, std::string_view body, core::Nanos now);

Reply get_check(engine::Loop& loop, std::string rule, std::string_view query, core::Nanos now);

Reply post_release(engine::Loop& loop, std::string_view body);
Reply delete_lease(engine::Loop& loop, std::string_view token);

}  // namespace sluice::server
