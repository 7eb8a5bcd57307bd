// A route's circuit breaker as the gateway meets it: ask before calling the upstream, answer
// from the fallback while it is open, report how the exchange ended. The state is the engine's.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/breaker.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/engine/request_view.hpp"

namespace sluice::engine {

namespace detail {
class RouteBreaker;
class StaleCache;
struct StaleEntry;
}  // namespace detail

// A change of the breaker's mode that one call made, for the frontend's log line.
struct BreakerChange {
  bool changed = false;
  core::Breaker::Mode from = core::Breaker::Mode::kClosed;
  core::Breaker::Mode to = core::Breaker::Mode::kClosed;
  core::Breaker::Reason reason = core::Breaker::Reason::kNone;  // why it opened
  core::Breaker::Figures figures;                               // the window then
  core::Nanos open_for = 0;
};

// How an upstream exchange ended, as the breaker judges it (the route's `errors:`).
struct ExchangeEnd {
  int status = 0;            // the upstream's status; 0: none came
  bool timed_out = false;    // timeouts.connect or timeouts.upstream passed
  bool unreachable = false;  // no connection, or it broke before the whole answer
  bool ignored = false;      // the client left first: it says nothing of the upstream
  core::Nanos duration = 0;  // from the first try to the end of the answer
};

// What an open breaker answers.
struct FallbackAnswer {
  bool stale = false;  // a kept response (else the route's status fallback)
  int status = 503;
  std::string_view headers;  // "Name: value\r\n" lines
  std::string_view body;
  core::Nanos age = 0;                             // stale: how long ago it was kept
  std::shared_ptr<const detail::StaleEntry> hold;  // keeps a stale answer's text alive
};

class BreakerCall {
 public:
  BreakerCall() = default;
  BreakerCall(BreakerCall&& other) noexcept;
  BreakerCall& operator=(BreakerCall&& other) noexcept;
  BreakerCall(const BreakerCall&) = delete;
  BreakerCall& operator=(const BreakerCall&) = delete;
  ~BreakerCall();  // never finished: reported as ignored (a probe's place goes back)

  // Asks the breaker of the route `out` matched (an admitted gateway request; `view` is the
  // request). A route without a breaker gives an inactive call.
  static BreakerCall ask(Outcome& out, const RequestView& view, core::Nanos now);

  bool active() const { return breaker_ != nullptr; }
  bool refused() const;
  const BreakerChange& change() const { return change_; }  // what the ask changed

  // refused(): the answer (the kept response where the route says stale and one is within
  // stale_for, else the status fallback), counted by kind.
  FallbackAnswer fallback(core::Nanos now);

  // How much of the response to copy for stale answers (a GET admitted on a route with
  // `fallback: stale`); 0: none.
  std::size_t keep_limit() const;
  // Keeps a good (2xx) response for stale answers; `headers` as FallbackAnswer's.
  void keep(int status, std::string headers, std::string body, core::Nanos now);

  // The exchange ended: judged by the route's `errors:` and recorded once. What it changed.
  BreakerChange finish(const ExchangeEnd& end, core::Nanos now);

 private:
  std::shared_ptr<detail::RouteBreaker> breaker_;
  std::shared_ptr<detail::StaleCache> cache_;
  core::Breaker::Ticket ticket_;
  std::uint64_t key_[2] = {0, 0};  // the stale cache's key of this request
  bool keeps_ = false;             // a GET: its good response is kept
  bool reads_ = false;             // a GET or HEAD: answered from a kept GET
  bool finished_ = true;
  BreakerChange change_;
};

}  // namespace sluice::engine
