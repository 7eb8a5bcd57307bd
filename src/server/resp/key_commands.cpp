// SLUICE.PEEK, SLUICE.RESET and SLUICE.REPORT (command_handlers.hpp).
#include <charconv>

#include "command_handlers.hpp"
#include "sluice/core/settle.hpp"
#include "throttle_command.hpp"

namespace sluice::server::resp {
namespace {

bool refused(Context& ctx) {
  const engine::Outcome& out = ctx.outcome;
  if (out.verdict != engine::Verdict::kInvalid) return false;
  ctx.out.error("ERR " + out.error);
  return true;
}

void write_peek(Context& ctx) {
  if (refused(ctx)) return;
  const ThrottleReply r = to_throttle_reply(ctx.outcome.total);
  ctx.out.array(6);
  ctx.out.integer(r.limited);
  ctx.out.integer(r.limit);
  ctx.out.integer(r.remaining);
  ctx.out.integer(r.retry_after);
  ctx.out.integer(r.reset_after);
  ctx.out.integer(ctx.outcome.key_seen ? 1 : 0);
}

void write_reset(Context& ctx) {
  if (refused(ctx)) return;
  ctx.out.integer(ctx.outcome.key_seen ? 1 : 0);
}

// A report's cost or reserve: 0 .. core::kMaxStatedCost, as POST /v1/report takes them.
bool amount(std::string_view s, std::int64_t& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0 &&
         out <= core::kMaxStatedCost;
}

void run(Context& ctx, std::span<const std::string_view> args, engine::KeyOp op, AfterRedis write,
         std::int64_t cost = 0) {
  if (ctx.loop.decide(engine::KeyAsk{args[1], args[2], op, cost}, ctx.now, ctx.outcome) ==
      engine::Progress::kPending) {
    ctx.after = write;
    return;
  }
  write(ctx);
}

}  // namespace

void sluice_peek(Context& ctx, std::span<const std::string_view> args) {
  run(ctx, args, engine::KeyOp::kPeek, write_peek);
}

void sluice_reset(Context& ctx, std::span<const std::string_view> args) {
  run(ctx, args, engine::KeyOp::kReset, write_reset);
}

// SLUICE.REPORT rule key cost [reserved]: charges cost - reserved to the key (a cost known
// after the fact), then answers as SLUICE.PEEK does.
void sluice_report(Context& ctx, std::span<const std::string_view> args) {
  std::int64_t cost = 0, reserved = 0;
  if (!amount(args[3], cost)) {
    return ctx.out.error("ERR invalid cost '" + std::string(args[3]) +
                         "': must be an integer from 0 to " + std::to_string(core::kMaxStatedCost));
  }
  if (args.size() > 4 && !amount(args[4], reserved)) {
    return ctx.out.error("ERR invalid reserved '" + std::string(args[4]) +
                         "': must be an integer from 0 to " + std::to_string(core::kMaxStatedCost));
  }
  run(ctx, args, engine::KeyOp::kReport, write_peek, cost - reserved);
}

}  // namespace sluice::server::resp
