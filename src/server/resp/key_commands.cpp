// SLUICE.PEEK and SLUICE.RESET (command_handlers.hpp).
#include "command_handlers.hpp"
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

void run(Context& ctx, std::span<const std::string_view> args, engine::KeyOp op, AfterRedis write) {
  if (ctx.loop.decide(engine::KeyAsk{args[1], args[2], op}, ctx.now, ctx.outcome) ==
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

}  // namespace sluice::server::resp
