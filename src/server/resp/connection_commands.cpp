// Connection commands (command_handlers.hpp). Error texts are Redis 7.0's.
#include <strings.h>

#include <charconv>
#include <string>

#include "auth_guard.hpp"
#include "command_handlers.hpp"
#include "transaction_commands.hpp"

namespace sluice::server::resp {

namespace {

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool parse_ll(std::string_view s, long long& v) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Redis: a client name is printable ASCII without spaces ('!'..'~'); empty clears it.
bool valid_name(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

constexpr std::string_view kBadName =
    "ERR Client names cannot contain spaces, newlines or special characters.";

}  // namespace

void ping(Context& ctx, std::span<const std::string_view> args) {
  if (args.size() == 2) return ctx.out.bulk(args[1]);
  ctx.out.simple("PONG");
}

void echo(Context& ctx, std::span<const std::string_view> args) { ctx.out.bulk(args[1]); }

void hello(Context& ctx, std::span<const std::string_view> args) {
  int protocol = ctx.client.protocol;
  if (args.size() >= 2) {
    long long v = 0;
    if (!parse_ll(args[1], v)) {
      return ctx.out.error("ERR Protocol version is not an integer or out of range");
    }
    if (v < 2 || v > 3) return ctx.out.error("NOPROTO unsupported protocol version");
    protocol = static_cast<int>(v);
  }
  std::string_view name;
  bool set_name = false;
  for (std::size_t j = 2; j < args.size(); ++j) {
    const std::size_t left = args.size() - j - 1;
    if (equals_nocase(args[j], "AUTH") && left >= 2) {
      // With resp.password_file/env: the configured user and password; without: like Redis's
      // default user with `nopass`, "default" with any password.
      const auto rules = ctx.loop.shared_rules();  // a copy, as in auth()
      const bool configured = rules->resp && !rules->resp->password.empty();
      if (configured) {
        if (!auth_admitted(ctx, args[j + 1])) return;
        if (!credentials_match(*rules->resp, args[j + 1], args[j + 2])) {
          return auth_failed(ctx, args[j + 1]);
        }
      } else if (!equals_nocase(args[j + 1], "default")) {
        return ctx.out.error("WRONGPASS invalid username-password pair or user is disabled.");
      }
      ctx.client.authenticated = true;
      j += 2;
    } else if (equals_nocase(args[j], "SETNAME") && left >= 1) {
      name = args[j + 1];
      set_name = true;
      if (!valid_name(name)) return ctx.out.error(kBadName);
      j += 1;
    } else {
      return ctx.out.error("ERR Syntax error in HELLO option '" + std::string(args[j]) + "'");
    }
  }
  const auto rules = ctx.loop.shared_rules();
  if (rules->resp && !rules->resp->password.empty() && !ctx.client.authenticated) {
    return ctx.out.error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "<proto> AUTH <user> <pass> option can be used to authenticate the client and select "
        "the RESP protocol version at the same time");
  }
  if (set_name) ctx.client.name = std::string(name);
  ctx.client.protocol = protocol;
  ctx.out.set_protocol(protocol);

  auto& out = ctx.out;
  out.map(7);
  out.bulk("server");
  out.bulk("sluice");
  out.bulk("version");
  out.bulk(SLUICE_VERSION);
  out.bulk("proto");
  out.integer(protocol);
  out.bulk("id");
  out.integer(static_cast<std::int64_t>(ctx.client.id));
  out.bulk("mode");
  out.bulk("standalone");
  out.bulk("role");
  out.bulk("master");
  out.bulk("modules");
  out.array(0);
}

void client_getname(Context& ctx, std::span<const std::string_view>) {
  if (ctx.client.name.empty()) return ctx.out.null();
  ctx.out.bulk(ctx.client.name);
}

void client_setname(Context& ctx, std::span<const std::string_view> args) {
  if (!valid_name(args[2])) return ctx.out.error(kBadName);
  ctx.client.name = std::string(args[2]);
  ctx.out.simple("OK");
}

void client_id(Context& ctx, std::span<const std::string_view>) {
  ctx.out.integer(static_cast<std::int64_t>(ctx.client.id));
}

void client_info(Context& ctx, std::span<const std::string_view>) {
  const ClientState& c = ctx.client;
  std::string line = "id=" + std::to_string(c.id) + " addr=" + c.addr + " laddr=" + c.laddr +
                     " fd=" + std::to_string(c.fd) + " name=" + c.name +
                     " age=" + std::to_string((ctx.now - c.created) / core::kNanosPerSecond) +
                     " idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 cmd=client|info"
                     " user=default redir=-1 resp=" +
                     std::to_string(c.protocol) + "\n";
  ctx.out.verbatim(line);
}

// Redis 7.2's CLIENT SETINFO LIB-NAME|LIB-VER value, which newer clients send on connect.
void client_setinfo(Context& ctx, std::span<const std::string_view> args) {
  if (!equals_nocase(args[2], "LIB-NAME") && !equals_nocase(args[2], "LIB-VER")) {
    return ctx.out.error("ERR Unrecognized option '" + std::string(args[2]) + "'");
  }
  ctx.out.simple("OK");
}

void select_db(Context& ctx, std::span<const std::string_view> args) {
  long long db = 0;
  if (!parse_ll(args[1], db)) return ctx.out.error("ERR value is not an integer or out of range");
  if (db != 0) return ctx.out.error("ERR DB index is out of range");
  ctx.out.simple("OK");
}

void quit(Context& ctx, std::span<const std::string_view>) {
  ctx.out.simple("OK");
  ctx.client.close_after_reply = true;
}

}  // namespace sluice::server::resp
