// AUTH failures (auth_guard.hpp).
#include "auth_guard.hpp"

#include <fmt/format.h>

#include <string>

#include "sluice/core/rate.hpp"
#include "sluice/core/utf8.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/log/log.hpp"

namespace sluice::server::resp {

namespace {

constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
constexpr std::size_t kLoggedUserBytes = 64;

// The rules are held, not referred to: a decision may move the loop to newer ones.
struct Settings {
  explicit Settings(Context& ctx) : rules(ctx.loop.shared_rules()) {}
  const config::RespSettings& operator*() const {
    static const config::RespSettings kDefaults;
    return rules->resp ? *rules->resp : kDefaults;
  }
  const config::RespSettings* operator->() const { return &**this; }
  std::shared_ptr<const config::RuleSet> rules;
};

// Asks the engine about the peer's failures: cost 0 looks, cost 1 charges one.
core::Decision ask_peer(Context& ctx, const config::RespSettings& r, std::int64_t cost) {
  const std::string limit = r.auth_failure_limit();
  // Its own key space: /v1/check callers keying the same inline limit by IP count apart.
  const std::string key = "resp-auth " + ctx.client.peer;
  ctx.loop.decide(engine::InlineAsk{limit, key, cost, 0}, ctx.now, ctx.outcome);
  core::Decision d = ctx.outcome.total;
  // The engine could not give a limit (its inline limits are all taken): the connection's
  // own cap still holds, so the peer is let through rather than every client locked out.
  if (ctx.outcome.verdict == engine::Verdict::kInvalid) d.remaining = 1;
  ctx.loop.release(ctx.outcome);
  ctx.outcome.reset();
  return d;
}

// At most one line a second for the whole listener, saying how many went unsaid.
void log_failure(Context& ctx, std::string_view user, const std::string& why) {
  ServerState& s = ctx.server;
  core::Nanos last = s.auth_logged_at.load(std::memory_order_relaxed);
  if ((last != 0 && ctx.now - last < core::kNanosPerSecond) ||
      !s.auth_logged_at.compare_exchange_strong(last, ctx.now, std::memory_order_relaxed)) {
    s.auth_unlogged.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t unsaid = s.auth_unlogged.exchange(0, std::memory_order_relaxed);
  const std::string shown = core::printable(user.substr(0, kLoggedUserBytes));
  log::warn(fmt::format(
      "sluice: resp: AUTH failed from {} as user '{}': {} ({} more since the last such line)",
      ctx.client.addr, shown, why, unsaid));
}

// The failure's reply, count and line; the connection's last one closes it.
void fail(Context& ctx, std::string_view user, std::string reply, std::string why) {
  const Settings r(ctx);
  if (++ctx.client.auth_failures >= r->max_auth_failures) {
    const std::string closing = "closing the connection after " +
                                std::to_string(ctx.client.auth_failures) +
                                " failed AUTHs (resp.max_auth_failures)";
    reply += " Now " + closing + ".";
    why += "; " + closing;
    ctx.client.close_after_reply = true;
    ctx.server.auth_closed.fetch_add(1, std::memory_order_relaxed);
  }
  log_failure(ctx, user, why);
  ctx.out.error(reply);
}

}  // namespace

std::string peer_of(const boost::asio::ip::address& ip) {
  if (ip.is_v4()) return ip.to_string();
  auto v6 = ip.to_v6();
  if (v6.is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).to_string();
  auto bytes = v6.to_bytes();
  for (std::size_t i = 8; i < bytes.size(); ++i) bytes[i] = 0;
  return boost::asio::ip::address_v6(bytes).to_string() + "/64";
}

bool auth_admitted(Context& ctx, std::string_view user) {
  const Settings r(ctx);
  if (ask_peer(ctx, *r, 0).remaining >= 1) return true;
  ctx.server.auth_refused.fetch_add(1, std::memory_order_relaxed);
  const std::string over = "too many failed AUTHs from " + ctx.client.peer +
                           " (resp.auth_failure_burst " + std::to_string(r->auth_failure_burst) +
                           ", then resp.auth_failure_rate " +
                           core::format_rate(r->auth_failure_rate) + ")";
  fail(ctx, user, "ERR AUTH not checked: " + over + "; try again later.", "not checked: " + over);
  return false;
}

void auth_failed(Context& ctx, std::string_view user) {
  ctx.server.auth_wrong.fetch_add(1, std::memory_order_relaxed);
  ask_peer(ctx, *Settings(ctx), 1);
  fail(ctx, user, std::string(kWrongPass), "wrong user or password");
}

}  // namespace sluice::server::resp
