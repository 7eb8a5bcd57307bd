// The public API's limit: an algorithm and its parameters, validated once, from a spec string
// ("token-bucket:rate=10/s,burst=20", docs/algorithms.md) or from typed parameters. Installed
// with libsluice; includes only the standard library (C++17 or later).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sluice {

// Durations are nanoseconds; the spec language takes whole microseconds and up (a period or
// window of 1500ns is refused, 1500us is not).
using Duration = std::chrono::nanoseconds;

// `count` events per `period`: Rate::per_second(10), or Rate{100, std::chrono::seconds(10)}.
// Kept as two integers, as written: each algorithm derives its own arithmetic from them
// exactly as the peer it reproduces does (nginx's milli-requests, Guava's double interval).
struct Rate {
  std::int64_t count = 0;
  Duration period = std::chrono::seconds(1);

  static constexpr Rate per_second(std::int64_t n) { return Rate{n, std::chrono::seconds(1)}; }
  static constexpr Rate per_minute(std::int64_t n) { return Rate{n, std::chrono::minutes(1)}; }
  static constexpr Rate per_hour(std::int64_t n) { return Rate{n, std::chrono::hours(1)}; }
};

// A spec or parameter that is not a valid limit. what() names the algorithm, the parameter and
// the problem, and lists what is accepted: "token-bucket: missing parameter 'burst' ...".
class LimitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Immutable and cheap to copy (a shared pointer to the parsed parameters). Thread-safe.
// Every factory validates exactly as the spec parser does (the typed ones render a spec and
// parse it), so the same limit written either way is the same limit, with the same errors.
class Limit {
 public:
  // Throws LimitError.
  explicit Limit(std::string_view spec);

  // Errors as values: nullopt and, if `error` is given, the message.
  static std::optional<Limit> parse(std::string_view spec, std::string* error = nullptr);

  // golang.org/x/time/rate: capacity `burst`, starts full, continuous refill.
  static Limit token_bucket(Rate rate, std::int64_t burst);
  // redis-cell's GCRA (CL.THROTTLE key burst count period): burst + 1 at once.
  static Limit gcra(Rate rate, std::int64_t burst);
  // nginx limit_req: `burst` excess requests queue; `delay` of them pass undelayed (nginx's
  // delay=N). leaky_bucket_nodelay is limit_req's `nodelay`.
  static Limit leaky_bucket(Rate rate, std::int64_t burst = 0, std::int64_t delay = 0);
  static Limit leaky_bucket_nodelay(Rate rate, std::int64_t burst);
  // Window counters: at most `limit` cost per `window` (admit now or never).
  static Limit fixed_window(std::int64_t limit, Duration window);
  static Limit sliding_window(std::int64_t limit, Duration window);  // two-window estimate
  static Limit sliding_log(std::int64_t limit, Duration window);     // exact; memory per request
  // Guava RateLimiter.create(permitsPerSecond): SmoothBursty, `max_burst` of saved permits.
  static Limit smooth_bursty(Rate rate, Duration max_burst = std::chrono::seconds(1));
  // Guava RateLimiter.create(permitsPerSecond, warmupPeriod): SmoothWarmingUp, starts cold.
  static Limit smooth_warmup(Rate rate, Duration warmup, double cold_factor = 3.0);
  // Sentinel's uniform queue (ThrottlingController): paced, queued up to `max_wait` (whole ms).
  static Limit queue(Rate rate, Duration max_wait = std::chrono::milliseconds(500));

  // The canonical spec: parameters in table order, defaults filled in.
  const std::string& spec() const;
  // Its algorithm's name, e.g. "token-bucket".
  const std::string& algorithm() const;

  struct Impl;  // the parsed parameters (src/api/limit_impl.hpp)

 private:
  friend class Limiter;
  friend class KeyedLimiter;
  explicit Limit(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace sluice
