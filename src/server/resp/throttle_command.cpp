// CL.THROTTLE (throttle_command.hpp).
#include "throttle_command.hpp"

#include <charconv>
#include <optional>
#include <string>

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

// The reply once the engine has decided (now, or after Redis).
void write_outcome(Context& ctx) {
  const engine::Outcome& out = ctx.outcome;
  if (out.verdict == engine::Verdict::kInvalid) return ctx.out.error(out.error);
  write_throttle_reply(ctx.out, to_throttle_reply(out.total));
}

}  // namespace

core::Expected<engine::ThrottleAsk> parse_throttle_args(std::span<const std::string_view> args) {
  engine::ThrottleAsk a;
  a.key = args[1];
  std::int64_t* fields[] = {&a.max_burst, &a.count, &a.period, &a.quantity};
  for (std::size_t i = 2; i < args.size(); ++i) {
    auto v = parse_i64(args[i]);
    if (!v) return not_integer(args[i]);
    *fields[i - 2] = *v;
  }
  // Zero and negative rates are the engine's to refuse (with redis-cell's words).
  return a;
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
  if (ctx.loop.decide(*a, ctx.now, ctx.outcome) == engine::Progress::kPending) {
    ctx.after = write_outcome;
    return;
  }
  write_outcome(ctx);
}

}  // namespace sluice::server::resp
