// CL.THROTTLE key max_burst count period [quantity]: redis-cell's command, decided by the
// engine (GCRA with the parameters of each call over one TAT per key, here or in Redis). This
// file parses the arguments and writes redis-cell's reply; no limiter state or arithmetic.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "resp_context.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/engine/ask.hpp"

namespace sluice::server::resp {

// redis-cell's reply: limited (0/1), limit (max_burst + 1), remaining, retry_after seconds
// (-1 when allowed or never possible), reset_after seconds.
struct ThrottleReply {
  std::int64_t limited = 0;
  std::int64_t limit = 0;
  std::int64_t remaining = 0;
  std::int64_t retry_after = -1;
  std::int64_t reset_after = 0;
  friend bool operator==(const ThrottleReply&, const ThrottleReply&) = default;
};

// `args` includes the command name (5 or 6 elements). Errors are whole error replies:
// redis-cell's "Cell error: Couldn't parse as integer: x", and "ERR ..." for what redis-cell
// leaves unchecked (negative values).
core::Expected<engine::ThrottleAsk> parse_throttle_args(std::span<const std::string_view> args);

// A decision as redis-cell's five integers (SLUICE.CHECK answers the same way).
ThrottleReply to_throttle_reply(const core::Decision& d);

// redis-cell's seconds: whole seconds, plus one when there is a millisecond part (PR #58):
// 1.0004 s -> 1, 1.001 s -> 2, -1 s -> -1.
std::int64_t cell_seconds(core::Nanos d);

void write_throttle_reply(proto::resp::ReplyWriter& out, const ThrottleReply& r);

// The command handler.
void cl_throttle(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
