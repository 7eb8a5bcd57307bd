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

}  // namespace

void sluice_check(Context& ctx, std::span<const std::string_view> args) {
  std::int64_t cost = 1;
  if (args.size() == 4) {
    const std::string_view s = args[3];
    const auto r = std::from_chars(s.data(), s.data() + s.size(), cost);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || cost <= 0) {
      return ctx.out.error("ERR invalid cost '" + std::string(s) + "': must be a positive integer");
    }
  }
  if (ctx.loop.decide(engine::RuleAsk{args[1], args[2], cost, engine::Via::kSluiceCheck}, ctx.now,
                      ctx.outcome) == engine::Progress::kPending) {
    ctx.after = write_outcome;
    return;
  }
  write_outcome(ctx);
}

void sluice_release(Context& ctx, std::span<const std::string_view> args) {
  ctx.out.integer(ctx.loop.release_lease(args[1]) ? 1 : 0);
}

}  // namespace sluice::server::resp
