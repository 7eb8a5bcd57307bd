// The handlers the command table's rows point at (command_table.cpp), one group per file:
// connection_commands.cpp, server_commands.cpp, check_command.cpp, key_commands.cpp. Each
// writes Redis's reply.
#pragma once

#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

// The connection itself, as Redis 7.0 answers them: PING, ECHO, HELLO (switches to RESP3),
// CLIENT GETNAME/SETNAME/ID/INFO/SETINFO, SELECT (database 0 only), QUIT.
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

// The server, minimal but well-formed for the clients that send them on connect: COMMAND
// (+ COUNT, DOCS, INFO, LIST), CONFIG GET, INFO.
void command(Context& ctx, std::span<const std::string_view> args);
void command_count(Context& ctx, std::span<const std::string_view> args);
void command_docs(Context& ctx, std::span<const std::string_view> args);
void command_info(Context& ctx, std::span<const std::string_view> args);
void command_list(Context& ctx, std::span<const std::string_view> args);
void config_get(Context& ctx, std::span<const std::string_view> args);
void info(Context& ctx, std::span<const std::string_view> args);

// SLUICE.CHECK rule key [cost]: a configured rule decided by the engine (kept here or in
// Redis), answered as CL.THROTTLE's five integers, plus the permit's token as a sixth element
// when a concurrency rule admits; SLUICE.RELEASE token gives that permit back.
void sluice_check(Context& ctx, std::span<const std::string_view> args);
void sluice_release(Context& ctx, std::span<const std::string_view> args);

// SLUICE.PEEK rule key: the key's state without charging it, as CL.THROTTLE's five integers
// (limited: whether a request of cost 1 would be refused now) and a sixth, 1 when the key had
// state; SLUICE.RESET rule key: forgets the key (its next request finds a full quota) and
// answers 1 when it had state, 0 when not, as DEL counts. Both are the engine's KeyAsk.
void sluice_peek(Context& ctx, std::span<const std::string_view> args);
void sluice_reset(Context& ctx, std::span<const std::string_view> args);
void sluice_report(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
