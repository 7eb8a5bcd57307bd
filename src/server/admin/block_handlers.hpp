// A rule's blocked keys on the admin listener (docs/admin-api.md, "Blocks"): the query checked,
// the engine's BlockList turned into JSON. The blocks are the engine's (Loop::list_blocks).
//
//   GET /v1/rules/{name}/blocks?n=100
//     200 {"rule","storage","hashed","count","total","truncated","capacity",
//          "blocks":[{"key","retry_after_ms"[,"key_bytes"][,"key_hex"]}]}
//     400 for a bad n (or another parameter), 404 for an unknown rule or one without on_deny:
//     block, 503 when the rule is kept in Redis and Redis does not answer
#pragma once

#include <string_view>

#include "admin_reply.hpp"
#include "sluice/core/time.hpp"
#include "sluice/engine/loop.hpp"

namespace sluice::server {

// Always answered through Reply::later, on `loop` (the admin loop's: its Redis store).
Reply list_blocks(engine::Loop& loop, std::string_view rule, std::string_view query,
                  core::Nanos now);

}  // namespace sluice::server
