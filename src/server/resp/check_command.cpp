// SLUICE.CHECK (check_command.hpp).
#include "check_command.hpp"

#include <charconv>
#include <string>

#include "throttle_command.hpp"

namespace sluice::server::resp {

void sluice_check(Context& ctx, std::span<const std::string_view> args) {
  if (!ctx.server.check) return ctx.out.error("ERR no rules configured");
  std::int64_t cost = 1;
  if (args.size() == 4) {
    const std::string_view s = args[3];
    const auto r = std::from_chars(s.data(), s.data() + s.size(), cost);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || cost <= 0) {
      return ctx.out.error("ERR invalid cost '" + std::string(s) + "': must be a positive integer");
    }
  }
  const RespCheck c = ctx.server.check(args[1], args[2], cost, ctx.now);
  if (!c.error.empty()) return ctx.out.error(c.error);
  if (c.decision.overflow) {
    return ctx.out.error("ERR invalid cost " + std::to_string(cost) + ": too large for rule '" +
                         std::string(args[1]) + "'");
  }
  write_throttle_reply(ctx.out, to_throttle_reply(c.decision));
}

}  // namespace sluice::server::resp
