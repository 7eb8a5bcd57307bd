// SLUICE.CHECK and SLUICE.RELEASE (command_handlers.hpp).
#include <charconv>
#include <string>

#include "command_handlers.hpp"
#include "throttle_command.hpp"

namespace sluice::server::resp {
namespace {

void write_outcome(Context& ctx) {
  const engine::Outcome& out = ctx.outcome;
  if (out.verdict == engine::Verdict::kInvalid) {
    if (out.error_kind == engine::ErrorKind::kBadCost) {
      return ctx.out.error("ERR invalid cost: too large for this rule");
    }
    return ctx.out.error("ERR " + out.error);
  }
  const ThrottleReply r = to_throttle_reply(out.total);
  ctx.out.array(out.lease_token.empty() ? 5 : 6);
  // A dry-run rule never asks its caller to refuse.
  ctx.out.integer(out.verdict == engine::Verdict::kAllow ? 0 : 1);
  ctx.out.integer(r.limit);
  ctx.out.integer(r.remaining);
  ctx.out.integer(r.retry_after);
  ctx.out.integer(r.reset_after);
  if (!out.lease_token.empty()) ctx.out.bulk(out.lease_token);
}

bool is_tier_word(std::string_view s) {
  return s.size() == 4 && (s[0] | 0x20) == 't' && (s[1] | 0x20) == 'i' && (s[2] | 0x20) == 'e' &&
         (s[3] | 0x20) == 'r';
}

}  // namespace

// SLUICE.CHECK rule key [cost] [TIER name]
void sluice_check(Context& ctx, std::span<const std::string_view> args) {
  std::int64_t cost = 1;
  std::size_t next = 3;
  if (args.size() > next && !is_tier_word(args[next])) {
    const std::string_view s = args[next++];
    const auto r = std::from_chars(s.data(), s.data() + s.size(), cost);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || cost <= 0) {
      return ctx.out.error("ERR invalid cost '" + std::string(s) + "': must be a positive integer");
    }
  }
  std::string_view tier;
  if (args.size() > next) {
    if (!is_tier_word(args[next]) || args.size() != next + 2) {
      return ctx.out.error("ERR syntax error: SLUICE.CHECK rule key [cost] [TIER name]");
    }
    tier = args[next + 1];
  }
  if (ctx.loop.decide(engine::RuleAsk{args[1], args[2], cost, engine::Via::kSluiceCheck, tier},
                      ctx.now, ctx.outcome) == engine::Progress::kPending) {
    ctx.after = write_outcome;
    return;
  }
  write_outcome(ctx);
}

void sluice_release(Context& ctx, std::span<const std::string_view> args) {
  ctx.out.integer(ctx.loop.release_lease(args[1]) ? 1 : 0);
}

}  // namespace sluice::server::resp
