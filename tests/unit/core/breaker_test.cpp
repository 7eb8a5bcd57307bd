// The circuit breaker on call sequences worked by hand: what trips it (error ratio, slow ratio,
// error count, never below min_requests), the open time, the probes, and late results.
#include "sluice/core/breaker.hpp"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

using B = Breaker;
constexpr Nanos ms(std::int64_t v) { return v * kNanosPerMilli; }

// Drives one breaker as the gateway does: admit, then report.
struct Drive {
  B::Params p;
  B::State s = B::start();

  B::Admit call(B::Result r, Nanos now, Nanos duration = ms(1)) {
    const B::Step step = B::admit(p, s, now);
    s = step.next;
    if (step.ticket.admit != B::Admit::kRefuse) s = B::record(p, s, step.ticket, r, duration, now);
    return step.ticket.admit;
  }
  // n calls at `now`, every `fail_every`-th a failure (0: none).
  void calls(int n, int fail_every, Nanos now) {
    for (int i = 1; i <= n; ++i) {
      call(fail_every > 0 && i % fail_every == 0 ? B::Result::kFailure : B::Result::kSuccess, now);
    }
  }
};

B::Params ratio_half() {
  B::Params p;
  p.error_ratio = 0.5;
  p.window = ms(10'000);
  p.min_requests = 20;
  p.open_for = ms(5'000);
  p.probes = 3;
  return p;
}

TEST(Breaker, DefaultsAreSentinelsDegradeRule) {
  const B::Params p;
  EXPECT_EQ(p.window, ms(1000));  // statIntervalMs
  EXPECT_EQ(p.min_requests, 5);   // minRequestAmount
  EXPECT_EQ(p.probes, 1);         // one probe in half-open
}

TEST(Breaker, HalfOfTwentyFailedOpensAtExactlyTheRatio) {
  Drive r{ratio_half()};
  r.calls(19, 2, ms(100));  // 19 calls, 9 failed: below min_requests 20
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
  r.call(B::Result::kFailure, ms(100));  // 20 calls, 10 failed: 10 >= 0.5 x 20
  EXPECT_EQ(r.s.mode, B::Mode::kOpen);
  EXPECT_EQ(r.s.reason, B::Reason::kErrorRatio);
  EXPECT_EQ(r.s.tripped.calls, 20);
  EXPECT_EQ(r.s.tripped.errors, 10);
  EXPECT_EQ(r.s.open_until, ms(5'100));
}

TEST(Breaker, BelowMinRequestsEveryFailureIsNotEnough) {
  Drive r{ratio_half()};
  r.calls(19, 1, ms(0));  // 19 of 19 failed
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
}

TEST(Breaker, AFailureRatioUnderTheThresholdStaysClosed) {
  Drive r{ratio_half()};
  r.calls(100, 3, ms(0));  // 33 of 100 failed: 0.33 < 0.5
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
  EXPECT_EQ(B::figures(r.p, r.s, ms(0)).errors, 33);
}

TEST(Breaker, OldBucketsLeaveTheWindow) {
  Drive r{ratio_half()};    // 10 s window, buckets of 1 s
  r.calls(19, 1, ms(500));  // 19 failures in bucket 0
  // At 10.5 s bucket 0 has left (10 buckets back: 1..10): one more failure is 1 of 1.
  r.call(B::Result::kFailure, ms(10'500));
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
  EXPECT_EQ(B::figures(r.p, r.s, ms(10'500)).calls, 1);
  // At 9.9 s they all counted: 19 + 1 = 20 calls, all failed.
  Drive q{ratio_half()};
  q.calls(19, 1, ms(500));
  q.call(B::Result::kFailure, ms(9'900));
  EXPECT_EQ(q.s.mode, B::Mode::kOpen);
}

TEST(Breaker, SlowCallsOpenItAtTheSlowRatio) {
  B::Params p;
  p.slow_ratio = 0.6;
  p.slow_call = ms(500);
  p.min_requests = 5;
  Drive r{p};
  for (int i = 0; i < 2; ++i) r.call(B::Result::kSuccess, ms(0), ms(501));  // slow: > 500 ms
  r.call(B::Result::kSuccess, ms(0), ms(500));  // exactly 500 ms is not slow
  r.call(B::Result::kSuccess, ms(0), ms(10));
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);  // 4 calls: below min_requests
  r.call(B::Result::kSuccess, ms(0), ms(900));
  EXPECT_EQ(r.s.mode, B::Mode::kOpen);  // 3 slow of 5 = 0.6
  EXPECT_EQ(r.s.reason, B::Reason::kSlowRatio);
}

TEST(Breaker, AnErrorCountOpensItWhateverTheRatio) {
  B::Params p;
  p.error_count = 3;
  p.min_requests = 1;
  Drive r{p};
  r.calls(100, 50, ms(0));  // 2 failures of 100
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
  r.call(B::Result::kFailure, ms(0));
  EXPECT_EQ(r.s.mode, B::Mode::kOpen);
  EXPECT_EQ(r.s.reason, B::Reason::kErrorCount);
}

TEST(Breaker, OpenRefusesUntilOpenForThenAdmitsOnlyTheProbes) {
  Drive r{ratio_half()};
  r.calls(20, 1, ms(0));  // opens at 0, until 5 s
  EXPECT_EQ(r.call(B::Result::kSuccess, ms(4'999)), B::Admit::kRefuse);
  EXPECT_EQ(r.s.mode, B::Mode::kOpen);
  // At 5 s: half-open, three probes in flight at once, the fourth refused.
  B::Ticket t[3];
  for (auto& ticket : t) {
    const B::Step step = B::admit(r.p, r.s, ms(5'000));
    r.s = step.next;
    ticket = step.ticket;
    EXPECT_EQ(ticket.admit, B::Admit::kProbe);
  }
  EXPECT_EQ(r.s.mode, B::Mode::kHalfOpen);
  EXPECT_EQ(B::admit(r.p, r.s, ms(5'000)).ticket.admit, B::Admit::kRefuse);
  r.s = B::record(r.p, r.s, t[0], B::Result::kSuccess, ms(1), ms(5'010));
  r.s = B::record(r.p, r.s, t[1], B::Result::kSuccess, ms(1), ms(5'010));
  EXPECT_EQ(r.s.mode, B::Mode::kHalfOpen);  // 2 of 3
  r.s = B::record(r.p, r.s, t[2], B::Result::kSuccess, ms(1), ms(5'010));
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
  // The window starts empty: 19 failures after closing are below min_requests again.
  r.calls(19, 1, ms(5'020));
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
}

TEST(Breaker, OneFailedProbeOpensItForAnotherOpenFor) {
  Drive r{ratio_half()};
  r.calls(20, 1, ms(0));
  EXPECT_EQ(r.call(B::Result::kSuccess, ms(5'000)), B::Admit::kProbe);
  EXPECT_EQ(r.call(B::Result::kFailure, ms(5'100)), B::Admit::kProbe);
  EXPECT_EQ(r.s.mode, B::Mode::kOpen);
  EXPECT_EQ(r.s.reason, B::Reason::kProbe);
  EXPECT_EQ(r.s.open_until, ms(10'100));
  EXPECT_EQ(r.call(B::Result::kSuccess, ms(10'099)), B::Admit::kRefuse);
  EXPECT_EQ(r.call(B::Result::kSuccess, ms(10'100)), B::Admit::kProbe);
}

TEST(Breaker, AnIgnoredProbeGivesItsPlaceBack) {
  B::Params p = ratio_half();
  p.probes = 1;
  Drive r{p};
  r.calls(20, 1, ms(0));
  const B::Step first = B::admit(p, r.s, ms(5'000));
  r.s = first.next;
  EXPECT_EQ(B::admit(p, r.s, ms(5'000)).ticket.admit, B::Admit::kRefuse);
  r.s = B::record(p, r.s, first.ticket, B::Result::kIgnored, ms(1), ms(5'001));
  EXPECT_EQ(r.s.mode, B::Mode::kHalfOpen);
  EXPECT_EQ(r.call(B::Result::kSuccess, ms(5'002)), B::Admit::kProbe);
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);
}

TEST(Breaker, ACallFromBeforeTheBreakDoesNotCountAfterIt) {
  Drive r{ratio_half()};
  const B::Step early = B::admit(r.p, r.s, ms(0));  // admitted while closed, answers late
  r.s = early.next;
  r.calls(20, 1, ms(0));  // opens
  const B::Step probe = B::admit(r.p, r.s, ms(5'000));
  r.s = probe.next;
  ASSERT_EQ(probe.ticket.admit, B::Admit::kProbe);
  r.s = B::record(r.p, r.s, early.ticket, B::Result::kFailure, ms(6'000), ms(6'000));
  EXPECT_EQ(r.s.mode, B::Mode::kHalfOpen);  // the late failure is not a probe's
}

TEST(Breaker, ASlowProbeReopensOnlyWhenSlownessTrips) {
  B::Params p = ratio_half();
  p.probes = 1;
  p.slow_call = ms(100);
  Drive r{p};
  r.calls(20, 1, ms(0));
  EXPECT_EQ(r.call(B::Result::kSuccess, ms(5'000), ms(200)), B::Admit::kProbe);
  EXPECT_EQ(r.s.mode, B::Mode::kClosed);  // slow_ratio off: a slow success is a success
  p.slow_ratio = 0.9;
  Drive q{p};
  q.calls(20, 1, ms(0));
  q.call(B::Result::kSuccess, ms(5'000), ms(200));
  EXPECT_EQ(q.s.mode, B::Mode::kOpen);
}

}  // namespace
}  // namespace sluice::core
