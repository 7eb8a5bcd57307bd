// MULTI, EXEC and DISCARD outside the session's own handling, and AUTH: Redis's transaction
// and authentication commands as Sluice answers them (docs/resp.md). The session queues and
// runs the commands; these say the error texts Redis says.
#pragma once

#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

// MULTI (opens a queue; nested: error), EXEC without MULTI, DISCARD (drops the queue).
void transaction_command(ClientState& client, proto::resp::ReplyWriter& out, std::string_view name);

// A command refused inside MULTI: EXEC will answer EXECABORT, so nothing queued is kept.
void refuse_transaction(ClientState& client);

// The table's rows for MULTI, EXEC and DISCARD (the session runs them; called directly they
// say so).
void multi(Context& ctx, std::span<const std::string_view> args);

// AUTH password | AUTH user password, against `resp.password_file`/`password_env`.
void auth(Context& ctx, std::span<const std::string_view> args);

// True when `user`/`password` is what the config says (compared in constant time).
bool credentials_match(const config::RespSettings& resp, std::string_view user,
                       std::string_view password);

}  // namespace sluice::server::resp
