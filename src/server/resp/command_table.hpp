// The RESP command table: one row per command, as dragonfly's `CI{"NAME", flags, arity, ...}`
// and nginx's ngx_command_t. dispatch() looks the name up case-insensitively, checks the
// arity and answers unknown commands and wrong arities with Redis's exact error texts.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

using Handler = void (*)(Context&, std::span<const std::string_view>);

struct CommandInfo {
  std::string_view name;  // as Redis names it in errors and COMMAND (lower case)
  int arity;              // Redis's: N = exactly N arguments with the name, -N = at least N
  int max_args;           // upper bound for a negative arity; 0 = none
  int first_key, last_key, key_step;         // key positions, for COMMAND (cluster-aware clients)
  Handler handler;                           // null for a container (CLIENT, COMMAND, CONFIG)
  std::span<const CommandInfo> subcommands;  // names "client|setname"
};

// Every top-level command.
std::span<const CommandInfo> command_table();

// Finds the row for `name` among `rows` (case-insensitive); nullptr if none. For
// subcommands, `name` is the subcommand alone ("setname").
const CommandInfo* find_command(std::span<const CommandInfo> rows, std::string_view name);

// Runs one command, or writes the error Redis would.
void dispatch(Context& ctx, std::span<const std::string_view> args);

// The error Redis would answer for `args` without running it (an unknown command, a wrong
// number of arguments); empty when it would run. MULTI refuses such commands when queued.
std::string command_problem(std::span<const std::string_view> args);

// Redis's "ERR unknown command '...', with args beginning with: '...' " text.
std::string unknown_command_error(std::span<const std::string_view> args);

}  // namespace sluice::server::resp
