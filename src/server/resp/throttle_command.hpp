// CL.THROTTLE key max_burst count period [quantity]: redis-cell's command on Sluice's GCRA
// (core/gcra.hpp, redis-cell's arithmetic) and a KeyedTable of TATs. The parameters come with
// every call and a key's TAT does not depend on them, so, as in redis-cell, one key may be
// throttled with different parameters by different callers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "resp_context.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/core/gcra.hpp"

namespace sluice::server::resp {

struct ThrottleArgs {
  std::string_view key;
  std::int64_t max_burst = 0;
  std::int64_t count = 0;
  std::int64_t period = 0;  // whole seconds
  std::int64_t quantity = 1;
};

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
// redis-cell's "Cell error: Couldn't parse as integer: x", "Cell error: Zero rates are not
// supported", and "ERR ..." for what redis-cell leaves unchecked (negative values, overflow).
core::Expected<ThrottleArgs> parse_throttle_args(std::span<const std::string_view> args);

// The GCRA parameters of a call: emission interval trunc(period_ns / count) in float64 as
// redis-cell computes it; refused when it rounds to zero or T * (max_burst + 1) overflows.
core::Expected<core::Gcra::Params> throttle_params(const ThrottleArgs& a);

// Decides and, when allowed, stores the key's new TAT. `key_hash`: hash_key(a.key) when the
// caller has it already.
core::Expected<ThrottleReply> throttle(ThrottleTable& table, const ThrottleArgs& a, core::Nanos now,
                                       const table::KeyHash* key_hash = nullptr);

// True for "CL.THROTTLE" in any case: the session prefetches these commands' keys.
bool is_throttle(std::string_view name);

// A decision as redis-cell's five integers (SLUICE.CHECK answers the same way).
ThrottleReply to_throttle_reply(const core::Decision& d);

// redis-cell's seconds: whole seconds, plus one when there is a millisecond part (PR #58):
// 1.0004 s -> 1, 1.001 s -> 2, -1 s -> -1.
std::int64_t cell_seconds(core::Nanos d);

void write_throttle_reply(proto::resp::ReplyWriter& out, const ThrottleReply& r);

// The command handler.
void cl_throttle(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
