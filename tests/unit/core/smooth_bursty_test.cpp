// Guava 31.1 SmoothBursty ("pay later"). Unless a test says otherwise: rate 5/s (stable
// interval 200ms) and max-burst 1s, so at most 5 permits are stored. max_wait 0 is
// tryAcquire(cost) and kForever is acquire(cost).
#include "sluice/core/smooth_bursty.hpp"

#include <gtest/gtest.h>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using BurstyLimiter = test::TestLimiter<SmoothBursty>;

SmoothBursty::Params five_per_second() { return SmoothBursty::make(per_second(5), sec(1)); }

TEST(SmoothBursty, StartsWithNothingStoredSoOneRequestPassesThenOnePer200ms) {
  BurstyLimiter l(five_per_second());
  EXPECT_TRUE(l.at(0).allowed);
  const Decision second = l.at(0);
  EXPECT_FALSE(second.allowed);
  EXPECT_EQ(second.retry_after, ms(200));
  EXPECT_FALSE(l.at(ms(199)).allowed);
  for (std::int64_t t = 200; t <= 2000; t += 200) EXPECT_TRUE(l.at(ms(t)).allowed) << t;
}

TEST(SmoothBursty, AcquireQueuesEachRequestOneIntervalBehindThePrevious) {
  BurstyLimiter l(five_per_second(), kForever);
  EXPECT_EQ(l.at(0).delay, 0);
  EXPECT_EQ(l.at(0).delay, ms(200));
  EXPECT_EQ(l.at(0).delay, ms(400));
  EXPECT_EQ(l.at(ms(100)).delay, ms(500));  // its ticket is at 600ms
}

TEST(SmoothBursty, TryAcquireWithATimeoutWaitsWhenTheTicketIsWithinIt) {
  // canAcquire: next free ticket - timeout <= now (not strict).
  BurstyLimiter l(five_per_second(), ms(200));
  EXPECT_EQ(l.at(0).delay, 0);
  EXPECT_EQ(l.at(0).delay, ms(200));
  const Decision third = l.at(0);  // ticket at 400ms, 200ms beyond the timeout
  EXPECT_FALSE(third.allowed);
  EXPECT_EQ(third.retry_after, ms(200));
}

TEST(SmoothBursty, ALargeRequestGoesAtOnceAndTheNextOnePaysForIt) {
  BurstyLimiter l(five_per_second(), kForever);
  const Decision big = l.at(0, 10);  // more than max-burst, still no wait
  EXPECT_TRUE(big.allowed);
  EXPECT_EQ(big.delay, 0);
  EXPECT_EQ(l.at(0).delay, sec(2));  // 10 permits * 200ms
  EXPECT_EQ(l.at(0, 1, 0).retry_after, ms(2200));
}

TEST(SmoothBursty, IdleTimeStoresUpToMaxBurstAndOneMorePaysLater) {
  BurstyLimiter l(five_per_second());
  ASSERT_TRUE(l.at(0).allowed);  // next free ticket at 200ms
  // 9.8s idle would store 49 permits; max-burst 1s keeps 5. They go at once, and a sixth
  // takes the free ticket at 10s, charging the next caller 200ms.
  EXPECT_FALSE(l.idle(sec(10)));  // a new key would have nothing stored: not the same
  EXPECT_EQ(l.allowed_of(10, sec(10)), 6);
  EXPECT_EQ(l.at(sec(10)).retry_after, ms(200));
}

TEST(SmoothBursty, CostTakesStoredPermitsFirst) {
  BurstyLimiter l(five_per_second());
  ASSERT_TRUE(l.at(0).allowed);
  const Decision three = l.at(sec(10), 3);
  ASSERT_TRUE(three.allowed);
  EXPECT_EQ(three.remaining, 2);          // 5 stored - 3
  EXPECT_TRUE(l.at(sec(10), 4).allowed);  // 2 stored + 2 paid later: 400ms charged
  EXPECT_EQ(l.at(sec(10)).retry_after, ms(400));
}

TEST(SmoothBursty, AClockThatDoesNotMoveStoresNothing) {
  BurstyLimiter l(five_per_second());
  EXPECT_EQ(l.allowed_of(1000, sec(3)), 1);
}

TEST(SmoothBursty, AJumpOfHoursStoresNoMoreThanMaxBurst) {
  BurstyLimiter l(five_per_second());
  ASSERT_TRUE(l.at(0).allowed);
  EXPECT_EQ(l.allowed_of(20, hours(4)), 6);
}

TEST(SmoothBursty, AHugeCostPassesOnceAndThenTheWaitIsReportedAsOverflow) {
  BurstyLimiter l(five_per_second(), kForever);
  EXPECT_TRUE(l.at(sec(1), kHugeCost).allowed);  // pay later, even for this
  // The next free ticket saturated at the end of int64 micros: acquire's wait in ns does not
  // fit (overflow, nothing charged); tryAcquire's retry hint saturates instead of wrapping.
  const Decision next = l.at(sec(1));
  EXPECT_FALSE(next.allowed);
  EXPECT_TRUE(next.overflow);
  const Decision tried = l.at(sec(1), 1, 0);
  EXPECT_FALSE(tried.allowed);
  EXPECT_GT(tried.retry_after, hours(24 * 365 * 100));
  EXPECT_GT(tried.reset_after, 0);
}

TEST(SmoothBursty, TheLastInstantOfATraceStillDecides) {
  BurstyLimiter l(five_per_second());
  ASSERT_TRUE(l.at(0).allowed);
  EXPECT_EQ(l.allowed_of(10, kEndOfTime), 6);
  EXPECT_EQ(l.at(kEndOfTime).retry_after, ms(200));
}

TEST(SmoothBursty, RetuneRescalesStoredPermitsToTheNewMaximum) {
  // Guava setRate: stored * new max / old max. 5 of 5 stored at 5/s -> 10 of 10 at 10/s.
  BurstyLimiter l(five_per_second());
  ASSERT_TRUE(l.at(0).allowed);
  l.retune(SmoothBursty::make(per_second(10), sec(1)), sec(10));
  EXPECT_EQ(l.allowed_of(20, sec(10)), 11);
  EXPECT_EQ(l.at(sec(10)).retry_after, ms(100));
}

}  // namespace
}  // namespace sluice::core
