// The circuit breaker of a route as a value type and pure functions: closed, open for a set
// time, half-open with a few probes; it trips on an error ratio, a slow-call ratio or an error
// count.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sluice/core/time.hpp"

namespace sluice::core {

// Sentinel's degrade rules (DegradeRule, ExceptionCircuitBreaker, ResponseTimeCircuitBreaker)
// shape it: the figures of a sliding window (Sentinel's statIntervalMs) judged when a call ends,
// nothing judged below min_requests (minRequestAmount), an open breaker that turns half-open at
// the first ask after open_for (Sentinel's retryTimeoutArrived; resilience4j's default too, its
// automaticTransitionFromOpenToHalfOpen being off), and a failed probe that opens it again. Two
// choices differ from Sentinel, both resilience4j's: a threshold trips when it is reached, not
// only exceeded ("equal or greater": 0.5 opens at exactly half), and `probes` calls may probe,
// all of which must succeed (Sentinel lets one through; resilience4j's
// permittedNumberOfCallsInHalfOpenState, judged here as "any failure reopens").
struct Breaker {
  enum class Mode : std::uint8_t { kClosed, kOpen, kHalfOpen };
  enum class Reason : std::uint8_t { kNone, kErrorRatio, kSlowRatio, kErrorCount, kProbe };
  // The window is cut in this many buckets (Sentinel's LeapArray); a bucket leaves whole.
  static constexpr std::int64_t kBuckets = 10;

  struct Params {
    double error_ratio = 0;          // (0, 1]; 0: off
    double slow_ratio = 0;           // (0, 1]; 0: off (Sentinel's slowRatioThreshold)
    Nanos slow_call = 0;             // a call longer than this is slow (Sentinel's count, in ms)
    std::int64_t error_count = 0;    // > 0; 0: off
    Nanos window = kNanosPerSecond;  // Sentinel's statIntervalMs default, 1000
    std::int64_t min_requests = 5;   // Sentinel's DEGRADE_DEFAULT_MIN_REQUEST_AMOUNT
    Nanos open_for = 5 * kNanosPerSecond;
    std::int64_t probes = 1;  // Sentinel's one probe
    friend bool operator==(const Params&, const Params&) = default;
  };

  struct Bucket {
    std::int64_t index = -1;  // which width-long slice of time it counts; -1: never used
    std::uint32_t calls = 0;
    std::uint32_t errors = 0;
    std::uint32_t slow = 0;
  };

  struct Figures {
    std::int64_t calls = 0;
    std::int64_t errors = 0;
    std::int64_t slow = 0;
  };

  struct State {
    Mode mode = Mode::kClosed;
    Reason reason = Reason::kNone;  // why it last opened
    std::uint32_t epoch = 0;        // moves at each change of mode: a late result is told apart
    std::uint32_t probes_out = 0;   // half-open: admitted and not yet reported
    std::uint32_t probes_ok = 0;    // half-open: succeeded
    Nanos open_until = 0;
    Figures tripped;  // the window's figures when it last opened
    std::array<Bucket, kBuckets> buckets{};
  };

  enum class Admit : std::uint8_t { kPass, kProbe, kRefuse };
  // What an admitted call carries to its report.
  struct Ticket {
    Admit admit = Admit::kRefuse;
    std::uint32_t epoch = 0;
  };
  struct Step {
    Ticket ticket;
    State next;
  };

  enum class Result : std::uint8_t {
    kSuccess,
    kFailure,
    kIgnored,  // says nothing of the upstream (the client left): a probe's place goes back
  };

  static State start() { return State{}; }

  // Before a call: pass (closed), probe (half-open, a place left) or refuse.
  static Step admit(const Params& p, State s, Nanos now) {
    if (s.mode == Mode::kOpen && now >= s.open_until) enter(s, Mode::kHalfOpen);
    switch (s.mode) {
      case Mode::kClosed:
        return {{Admit::kPass, s.epoch}, s};
      case Mode::kHalfOpen:
        if (static_cast<std::int64_t>(s.probes_out + s.probes_ok) < p.probes) {
          ++s.probes_out;
          return {{Admit::kProbe, s.epoch}, s};
        }
        return {{Admit::kRefuse, s.epoch}, s};
      case Mode::kOpen:
        break;
    }
    return {{Admit::kRefuse, s.epoch}, s};
  }

  // After a call: its result and how long it took. A closed breaker counts it and judges the
  // window; a probe closes the breaker (the last of `probes` to succeed) or opens it again.
  static State record(const Params& p, State s, Ticket t, Result r, Nanos duration, Nanos now) {
    if (t.admit == Admit::kRefuse || r == Result::kIgnored) {
      if (t.admit == Admit::kProbe && t.epoch == s.epoch && s.probes_out > 0) --s.probes_out;
      return s;
    }
    const bool slow = p.slow_call > 0 && duration > p.slow_call;
    if (t.admit == Admit::kProbe) {
      if (t.epoch != s.epoch || s.mode != Mode::kHalfOpen) return s;
      --s.probes_out;
      if (r == Result::kFailure || (slow && p.slow_ratio > 0)) {
        open(p, s, Reason::kProbe, now);
      } else if (static_cast<std::int64_t>(++s.probes_ok) >= p.probes) {
        enter(s, Mode::kClosed);
        s.buckets = {};  // Sentinel's resetStat: the failures before the break are forgotten
      }
      return s;
    }
    if (s.mode != Mode::kClosed || t.epoch != s.epoch) return s;  // a call from before the break
    Bucket& b = bucket(p, s, now);
    ++b.calls;
    if (r == Result::kFailure) ++b.errors;
    if (slow) ++b.slow;
    const Figures f = figures(p, s, now);
    const Reason why = judge(p, f);
    if (why != Reason::kNone) {
      s.tripped = f;
      open(p, s, why, now);
    }
    return s;
  }

  // The window's figures at `now` (buckets older than the window left out).
  static Figures figures(const Params& p, const State& s, Nanos now) {
    const std::int64_t current = now / width(p);
    Figures f;
    for (const Bucket& b : s.buckets) {
      if (b.index < 0 || b.index <= current - kBuckets || b.index > current) continue;
      f.calls += b.calls;
      f.errors += b.errors;
      f.slow += b.slow;
    }
    return f;
  }

  // Which threshold the figures reach, in the order written; kNone below min_requests.
  static Reason judge(const Params& p, const Figures& f) {
    if (f.calls <= 0 || f.calls < p.min_requests) return Reason::kNone;
    const auto reached = [&](std::int64_t n, double ratio) {
      return ratio > 0 && static_cast<double>(n) >= ratio * static_cast<double>(f.calls);
    };
    if (reached(f.errors, p.error_ratio)) return Reason::kErrorRatio;
    if (reached(f.slow, p.slow_ratio)) return Reason::kSlowRatio;
    if (p.error_count > 0 && f.errors >= p.error_count) return Reason::kErrorCount;
    return Reason::kNone;
  }

  static std::string_view mode_name(Mode m) {
    constexpr std::string_view kNames[] = {"closed", "open", "half_open"};
    return kNames[static_cast<int>(m)];
  }
  static std::string_view reason_name(Reason r) {
    constexpr std::string_view kNames[] = {"none", "error_ratio", "slow_ratio", "error_count",
                                           "probe"};
    return kNames[static_cast<int>(r)];
  }

 private:
  static Nanos width(const Params& p) { return p.window / kBuckets > 0 ? p.window / kBuckets : 1; }

  static Bucket& bucket(const Params& p, State& s, Nanos now) {
    const std::int64_t index = now / width(p);
    Bucket& b = s.buckets[static_cast<std::size_t>(index % kBuckets)];
    if (b.index != index) b = Bucket{index, 0, 0, 0};
    return b;
  }

  static void enter(State& s, Mode m) {
    s.mode = m;
    ++s.epoch;
    s.probes_out = 0;
    s.probes_ok = 0;
  }

  static void open(const Params& p, State& s, Reason why, Nanos now) {
    enter(s, Mode::kOpen);
    s.reason = why;
    s.open_until = now + p.open_for;
  }
};

static_assert(sizeof(Breaker::State) <= 320, "a route's breaker state stays small: ten buckets");

}  // namespace sluice::core
