// Transactions and AUTH (transaction_commands.hpp). Error texts are Redis 7.0's.
#include "transaction_commands.hpp"

#include <openssl/crypto.h>
#include <strings.h>

#include "auth_guard.hpp"

namespace sluice::server::resp {
namespace {

bool is(std::string_view name, std::string_view command) {
  return name.size() == command.size() &&
         strncasecmp(name.data(), command.data(), command.size()) == 0;
}

}  // namespace

void refuse_transaction(ClientState& client) {
  client.multi_refused = true;
  client.queued.drop();  // EXEC will not run them
}

void transaction_command(ClientState& client, proto::resp::ReplyWriter& out,
                         std::string_view name) {
  if (is(name, "multi")) {
    if (client.in_multi) return out.error("ERR MULTI calls can not be nested");
    client.in_multi = true;
    client.multi_refused = false;
    client.queued.clear();
    return out.simple("OK");
  }
  if (!client.in_multi) {
    return out.error(is(name, "exec") ? "ERR EXEC without MULTI" : "ERR DISCARD without MULTI");
  }
  client.in_multi = false;  // DISCARD
  client.multi_refused = false;
  client.queued.clear();
  out.simple("OK");
}

void multi(Context& ctx, std::span<const std::string_view> args) {
  transaction_command(ctx.client, ctx.out, args[0]);
}

bool credentials_match(const config::RespSettings& resp, std::string_view user,
                       std::string_view password) {
  // Lengths may differ in time; contents never do (CRYPTO_memcmp).
  const bool user_ok = user.size() == resp.user.size() &&
                       CRYPTO_memcmp(user.data(), resp.user.data(), user.size()) == 0;
  const bool password_ok =
      password.size() == resp.password.size() &&
      CRYPTO_memcmp(password.data(), resp.password.data(), password.size()) == 0;
  return user_ok && password_ok;
}

void auth(Context& ctx, std::span<const std::string_view> args) {
  // A copy: AUTH's own decision may move the loop to newer rules.
  const auto rules = ctx.loop.shared_rules();
  if (!rules->resp || rules->resp->password.empty()) {
    return ctx.out.error(
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
  }
  const std::string_view user = args.size() == 3 ? args[1] : std::string_view("default");
  const std::string_view password = args.back();
  // A failed AUTH leaves the connection unauthenticated (as it always has here).
  ctx.client.authenticated = false;
  if (!auth_admitted(ctx, user)) return;
  if (!credentials_match(*rules->resp, user, password)) return auth_failed(ctx, user);
  ctx.client.authenticated = true;
  ctx.out.simple("OK");
}

}  // namespace sluice::server::resp
