// ClientSession (client_session.hpp), its part in the route's circuit breaker: ask it before the
// upstream is called, answer from the fallback while it is open, report how each exchange
// ended, keep good responses for stale answers, and log each change of the breaker's mode.
#include <fmt/format.h>

#include <boost/beast/core/string.hpp>

#include "client_session.hpp"
#include "sluice/log/log.hpp"
#include "worker.hpp"

namespace sluice::server::gateway {
namespace {

using B = core::Breaker;

bool has_content_type(std::string_view lines) {
  for (std::size_t at = 0; at < lines.size();) {
    const std::size_t end = lines.find("\r\n", at);
    const std::string_view line = lines.substr(at, end - at);
    if (line.size() >= 13 && boost::beast::iequals(line.substr(0, 13), "Content-Type:")) {
      return true;
    }
    if (end == std::string_view::npos) break;
    at = end + 2;
  }
  return false;
}

void log_change(std::string_view route, const engine::BreakerChange& c) {
  if (!c.changed) return;
  const std::string from(B::mode_name(c.from));
  const std::string to(B::mode_name(c.to));
  if (c.to == B::Mode::kOpen) {
    log::warn("sluice: breaker opened, the route answers from its fallback",
              {{"route", std::string(route)},
               {"from", from},
               {"to", to},
               {"reason", std::string(B::reason_name(c.reason))},
               {"calls", c.figures.calls},
               {"errors", c.figures.errors},
               {"slow", c.figures.slow},
               {"open_for_ms", c.open_for / core::kNanosPerMilli}});
  } else if (c.to == B::Mode::kHalfOpen) {
    log::info("sluice: breaker half-open, probing the upstream",
              {{"route", std::string(route)}, {"from", from}, {"to", to}});
  } else {
    log::info("sluice: breaker closed, the upstream is called again",
              {{"route", std::string(route)}, {"from", from}, {"to", to}});
  }
}

}  // namespace

Awaitable<ClientSession::Next> ClientSession::call_upstream(bool keep_alive) {
  const core::Nanos now = worker_.clock().now();
  breaker_ = engine::BreakerCall::ask(outcome_, view_, now);
  if (breaker_.active()) log_change(outcome_.route()->name, breaker_.change());
  if (!breaker_.refused()) co_return co_await forward(keep_alive);
  const engine::FallbackAnswer a = breaker_.fallback(now);
  exchange_.decision = a.stale ? "stale" : "fallback";
  std::string extra(fields_);
  extra += a.headers;
  if (a.stale) {
    // The answer is not the upstream's of now: said in a field of our own and in Age (RFC 9111
    // 5.1, seconds since the response was kept).
    fmt::format_to(std::back_inserter(extra), "X-Sluice-Stale: 1\r\nAge: {}\r\n",
                   a.age / core::kNanosPerSecond);
  }
  // A kept response has its own Content-Type, or had none.
  co_return co_await respond_local(a.status, a.body, extra, keep_alive,
                                   a.stale || has_content_type(a.headers));
}

void ClientSession::breaker_end(const engine::ExchangeEnd& end) {
  if (!breaker_.active()) return;
  log_change(outcome_.route()->name, breaker_.finish(end, worker_.clock().now()));
}

void ClientSession::keep_stale(int status, core::Nanos now) {
  if (!stale_copy_.on()) return;
  stale_copy_.stop();
  breaker_.keep(status, stale_copy_.take_headers(), stale_copy_.take_body(), now);
}

}  // namespace sluice::server::gateway
