// CL.THROTTLE (throttle_command.hpp).
#include "throttle_command.hpp"

#include <strings.h>

#include <charconv>
#include <optional>
#include <string>

#include "sluice/table/key_hash.hpp"

namespace sluice::server::resp {

namespace {

// Rust's str::parse::<i64>, which redis-cell uses: optional sign, decimal digits, in range.
std::optional<std::int64_t> parse_i64(std::string_view s) {
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

core::Error not_integer(std::string_view arg) {
  return core::make_error("Cell error: Couldn't parse as integer: " + std::string(arg));
}

}  // namespace

core::Expected<ThrottleArgs> parse_throttle_args(std::span<const std::string_view> args) {
  ThrottleArgs a;
  a.key = args[1];
  std::int64_t* fields[] = {&a.max_burst, &a.count, &a.period, &a.quantity};
  for (std::size_t i = 2; i < args.size(); ++i) {
    auto v = parse_i64(args[i]);
    if (!v) return not_integer(args[i]);
    *fields[i - 2] = *v;
  }
  // redis-cell refuses a zero rate; negative values it computes with, which would only make
  // nonsense (a limit of 0, a TAT moving backwards), so they are refused here.
  if (a.count == 0 || a.period == 0) {
    return core::make_error("Cell error: Zero rates are not supported");
  }
  if (a.max_burst < 0) {
    return core::make_error("ERR invalid max_burst " + std::to_string(a.max_burst) +
                            ": must be 0 or more");
  }
  if (a.count < 0) {
    return core::make_error("ERR invalid count " + std::to_string(a.count) + ": must be positive");
  }
  if (a.period < 0) {
    return core::make_error("ERR invalid period " + std::to_string(a.period) +
                            ": must be positive");
  }
  if (a.quantity < 0) {
    return core::make_error("ERR invalid quantity " + std::to_string(a.quantity) +
                            ": must be 0 or more");
  }
  return a;
}

core::Expected<core::Gcra::Params> throttle_params(const ThrottleArgs& a) {
  core::Nanos period_ns = 0;
  if (__builtin_mul_overflow(a.period, core::kNanosPerSecond, &period_ns)) {
    return core::make_error("ERR invalid period " + std::to_string(a.period) +
                            ": too large (at most 9223372036 seconds)");
  }
  const core::Gcra::Params p = core::Gcra::make(core::Rate{a.count, period_ns}, a.max_burst);
  // redis-cell: an interval that truncates to 0 ns is a zero rate.
  if (p.interval <= 0) return core::make_error("Cell error: Zero rates are not supported");
  if (!core::Gcra::valid(p)) {
    return core::make_error("ERR max_burst " + std::to_string(a.max_burst) +
                            " too large for this rate: the burst would last over 292 years");
  }
  return p;
}

core::Expected<ThrottleReply> throttle(ThrottleTable& table, const ThrottleArgs& a, core::Nanos now,
                                       const table::KeyHash* key_hash) {
  auto p = throttle_params(a);
  if (!p) return core::make_error(p.error());
  auto locked = table.lock(key_hash != nullptr ? *key_hash : table::hash_key(a.key), now);
  if (!locked) return core::make_error("ERR throttle table busy, try again");
  const auto step = core::Gcra::decide(*p, locked->state(), now, a.quantity, 0);
  if (step.decision.overflow) {
    return core::make_error("ERR invalid quantity " + std::to_string(a.quantity) +
                            ": too large for this rate");
  }
  if (step.decision.allowed) locked->state() = step.next;
  return to_throttle_reply(step.decision);
}

bool is_throttle(std::string_view name) {
  return name.size() == 11 && strncasecmp(name.data(), "cl.throttle", 11) == 0;
}

std::int64_t cell_seconds(core::Nanos d) {
  std::int64_t s = d / core::kNanosPerSecond;
  if ((d % core::kNanosPerSecond) / core::kNanosPerMilli > 0) ++s;
  return s;
}

ThrottleReply to_throttle_reply(const core::Decision& d) {
  ThrottleReply r;
  r.limited = d.allowed ? 0 : 1;
  r.limit = d.limit;
  r.remaining = d.remaining;
  r.retry_after = d.allowed || d.retry_after == core::kNever ? -1 : cell_seconds(d.retry_after);
  r.reset_after = cell_seconds(d.reset_after);
  return r;
}

void write_throttle_reply(proto::resp::ReplyWriter& out, const ThrottleReply& r) {
  out.array(5);
  out.integer(r.limited);
  out.integer(r.limit);
  out.integer(r.remaining);
  out.integer(r.retry_after);
  out.integer(r.reset_after);
}

void cl_throttle(Context& ctx, std::span<const std::string_view> args) {
  auto a = parse_throttle_args(args);
  if (!a) return ctx.out.error(a.error());
  auto r = throttle(ctx.server.throttle, *a, ctx.now, ctx.key_hash);
  if (!r) return ctx.out.error(r.error());
  write_throttle_reply(ctx.out, *r);
}

}  // namespace sluice::server::resp
