// The command table (command_table.hpp): rows and the dispatcher. The handlers live beside
// the concept they serve: throttle_command.cpp, check_command.cpp, connection_commands.cpp,
// server_commands.cpp.
#include "command_table.hpp"

#include <strings.h>

#include <cctype>
#include <string>

#include "command_handlers.hpp"
#include "throttle_command.hpp"
#include "transaction_commands.hpp"

namespace sluice::server::resp {

namespace {

constexpr CommandInfo kClient[] = {
    {"client|getname", 2, 0, 0, 0, 0, client_getname, {}},
    {"client|id", 2, 0, 0, 0, 0, client_id, {}},
    {"client|info", 2, 0, 0, 0, 0, client_info, {}},
    {"client|setinfo", 4, 0, 0, 0, 0, client_setinfo, {}},
    {"client|setname", 3, 0, 0, 0, 0, client_setname, {}},
};

constexpr CommandInfo kCommand[] = {
    {"command|count", 2, 0, 0, 0, 0, command_count, {}},
    {"command|docs", -2, 0, 0, 0, 0, command_docs, {}},
    {"command|info", -2, 0, 0, 0, 0, command_info, {}},
    {"command|list", -2, 0, 0, 0, 0, command_list, {}},
};

constexpr CommandInfo kConfig[] = {
    {"config|get", -3, 0, 0, 0, 0, config_get, {}},
};

// CL.THROTTLE's key is argument 1; SLUICE.CHECK's, PEEK's, RESET's and REPORT's argument 2
// (after the rule).
constexpr CommandInfo kCommands[] = {
    {"cl.throttle", -5, 6, 1, 1, 1, cl_throttle, {}},
    {"sluice.check", -3, 6, 2, 2, 1, sluice_check, {}},
    {"sluice.release", 2, 0, 0, 0, 0, sluice_release, {}},
    {"sluice.peek", 3, 0, 2, 2, 1, sluice_peek, {}},
    {"sluice.reset", 3, 0, 2, 2, 1, sluice_reset, {}},
    {"sluice.report", -4, 5, 2, 2, 1, sluice_report, {}},
    {"auth", -2, 3, 0, 0, 0, auth, {}},
    {"multi", 1, 0, 0, 0, 0, multi, {}},
    {"exec", 1, 0, 0, 0, 0, multi, {}},
    {"discard", 1, 0, 0, 0, 0, multi, {}},
    {"ping", -1, 2, 0, 0, 0, ping, {}},
    {"echo", 2, 0, 0, 0, 0, echo, {}},
    {"hello", -1, 0, 0, 0, 0, hello, {}},
    {"client", -2, 0, 0, 0, 0, nullptr, kClient},
    {"command", -1, 0, 0, 0, 0, command, kCommand},
    {"config", -2, 0, 0, 0, 0, nullptr, kConfig},
    {"info", -1, 0, 0, 0, 0, info, {}},
    {"select", 2, 0, 0, 0, 0, select_db, {}},
    {"quit", -1, 0, 0, 0, 0, quit, {}},
};

bool arity_ok(const CommandInfo& c, std::size_t argc) {
  const auto n = static_cast<long>(argc);
  if (c.arity >= 0) return n == c.arity;
  if (n < -c.arity) return false;
  return c.max_args == 0 || n <= c.max_args;
}

// The part after "container|".
std::string_view short_name(std::string_view full) {
  const auto bar = full.find('|');
  return bar == std::string_view::npos ? full : full.substr(bar + 1);
}

// Redis formats with "%s", which stops at a NUL byte.
std::string_view c_str_view(std::string_view s) {
  const auto nul = s.find('\0');
  return nul == std::string_view::npos ? s : s.substr(0, nul);
}

}  // namespace

std::span<const CommandInfo> command_table() { return kCommands; }

const CommandInfo* find_command(std::span<const CommandInfo> rows, std::string_view name) {
  for (const CommandInfo& c : rows) {
    const std::string_view n = short_name(c.name);
    if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0) return &c;
  }
  return nullptr;
}

std::string unknown_command_error(std::span<const std::string_view> args) {
  // Redis 7.0 (server.c processCommand): each argument as "'%.*s' ", cut to the room left
  // below 128 bytes, while the list is shorter than that.
  std::string list;
  for (std::size_t i = 1; i < args.size() && list.size() < 128; ++i) {
    const std::size_t room = 128 - list.size();
    list += '\'';
    list += c_str_view(args[i]).substr(0, room);
    list += "' ";
  }
  std::string m = "ERR unknown command '";
  m += c_str_view(args[0]).substr(0, 128);
  m += "', with args beginning with: ";
  m += list;
  return m;
}

namespace {

// The row that runs `args`, or the error Redis would answer (in `problem`).
const CommandInfo* resolve(std::span<const std::string_view> args, std::string& problem) {
  const CommandInfo* c = find_command(command_table(), args[0]);
  if (c == nullptr) {
    problem = unknown_command_error(args);
    return nullptr;
  }
  if (!c->subcommands.empty() && args.size() >= 2) {
    const CommandInfo* sub = find_command(c->subcommands, args[1]);
    if (sub == nullptr) {
      std::string upper(c->name);
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      problem = "ERR unknown subcommand '" + std::string(c_str_view(args[1]).substr(0, 128)) +
                "'. Try " + upper + " HELP.";
      return nullptr;
    }
    c = sub;
  }
  if (!arity_ok(*c, args.size()) || c->handler == nullptr) {
    problem = "ERR wrong number of arguments for '" + std::string(c->name) + "' command";
    return nullptr;
  }
  return c;
}

}  // namespace

std::string command_problem(std::span<const std::string_view> args) {
  std::string problem;
  resolve(args, problem);
  return problem;
}

void dispatch(Context& ctx, std::span<const std::string_view> args) {
  std::string problem;
  const CommandInfo* c = resolve(args, problem);
  if (c == nullptr) return ctx.out.error(problem);
  c->handler(ctx, args);
}

}  // namespace sluice::server::resp
