// One key of a rule, looked at or reset, on the admin listener (docs/admin-api.md, "Keys"):
// the engine's KeyAsk turned into JSON. No limiter arithmetic here.
//
//   GET    /v1/rules/{name}/keys/{key}  200: the key's state, not charged
//   DELETE /v1/rules/{name}/keys/{key}  200: the key forgotten (its next request finds a full
//                                       quota), and its state now
//   GET    /v1/rules/{name}/blocks/{key}  200: whether the key is blocked (on_deny: block),
//                                         for how long yet
//   DELETE /v1/rules/{name}/blocks/{key}  200: the block lifted (its limit decides again)
// 404 for an unknown rule or one without on_deny: block, 409 for a reset of a concurrency rule, 503
// when the rule is kept in Redis and Redis does not answer.
#pragma once

#include <string_view>

#include "admin_reply.hpp"
#include "sluice/core/time.hpp"
#include "sluice/engine/loop.hpp"

namespace sluice::server {

// The status of a refused key ask (or block listing): 404 unknown rule or no on_deny, 409 not
// resettable or settlable, 503 Redis unavailable, else 400.
unsigned key_error_status(engine::ErrorKind kind);

// Rules kept in Redis are asked through `loop` (the admin loop's); their replies come through
// Reply::later.
Reply key_state(engine::Loop& loop, std::string_view rule, std::string_view key, engine::KeyOp op,
                core::Nanos now, std::int64_t cost = 0);

// POST /v1/report {"rule": NAME, "key": KEY, "cost": N, "reserved": R}: charges N - R more to
// the key (a cost known after the fact, settling what a check with cost R reserved), and
// answers the key's state as GET /v1/rules/{name}/keys/{key} does, with "reported": N - R.
Reply post_report(engine::Loop& loop, std::string_view body, core::Nanos now);

}  // namespace sluice::server
