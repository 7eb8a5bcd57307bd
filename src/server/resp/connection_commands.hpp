// The commands about the connection itself, as Redis 7.0 answers them: PING, ECHO, HELLO
// (switches to RESP3), CLIENT GETNAME/SETNAME/ID/INFO/SETINFO, SELECT (database 0 only), QUIT.
#pragma once

#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

void ping(Context& ctx, std::span<const std::string_view> args);
void echo(Context& ctx, std::span<const std::string_view> args);
void hello(Context& ctx, std::span<const std::string_view> args);
void client_getname(Context& ctx, std::span<const std::string_view> args);
void client_setname(Context& ctx, std::span<const std::string_view> args);
void client_id(Context& ctx, std::span<const std::string_view> args);
void client_info(Context& ctx, std::span<const std::string_view> args);
void client_setinfo(Context& ctx, std::span<const std::string_view> args);
void select_db(Context& ctx, std::span<const std::string_view> args);
void quit(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
