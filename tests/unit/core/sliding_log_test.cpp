// Sliding log: allowed iff the cost allowed in (t - window, t] plus this cost <= limit.
// Unless a test says otherwise: limit 3 per 1s window.
#include "sluice/core/sliding_log.hpp"

#include <gtest/gtest.h>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using Log = test::TestLimiter<SlidingLog>;

constexpr SlidingLog::Params kThreePerSecond{3, sec(1)};

TEST(SlidingLog, AllowsTheLimitInAnyWindowAndRetriesWhenTheOldestLeaves) {
  Log l(kThreePerSecond);
  EXPECT_TRUE(l.at(0).allowed);
  EXPECT_TRUE(l.at(ms(100)).allowed);
  const Decision third = l.at(ms(200));
  ASSERT_TRUE(third.allowed);
  EXPECT_EQ(third.remaining, 0);
  const Decision fourth = l.at(ms(500));
  EXPECT_FALSE(fourth.allowed);
  EXPECT_EQ(fourth.retry_after, ms(500));  // the request at 0 leaves the window at 1s
  EXPECT_FALSE(l.at(ms(999)).allowed);
  // The window is (t - 1s, t]: at exactly 1s the request at 0 is out.
  EXPECT_TRUE(l.at(sec(1)).allowed);
  EXPECT_FALSE(l.at(sec(1)).allowed);
  EXPECT_TRUE(l.at(ms(1100)).allowed);
}

TEST(SlidingLog, HasNoBoundaryToExploitUnlikeTheFixedWindow) {
  Log l(kThreePerSecond);
  EXPECT_EQ(l.allowed_of(3, ms(999)), 3);
  EXPECT_EQ(l.allowed_of(3, ms(1000)), 0);
  EXPECT_EQ(l.allowed_of(3, ms(1999)), 3);
}

TEST(SlidingLog, RequestsAtOneInstantShareOneEntry) {
  Log l(SlidingLog::Params{100, sec(1)});
  EXPECT_EQ(l.allowed_of(100, ms(5)), 100);
  EXPECT_EQ(l.state().log.size(), 1u);
  EXPECT_EQ(l.state().sum, 100);
}

TEST(SlidingLog, SteadyOverloadPassesTheLimitPerWindowAndKeepsTheLogThatSmall) {
  // One request per 100ms against 3/s: those at 0, 100 and 200ms of each second pass.
  Log l(kThreePerSecond);
  int allowed = 0;
  for (std::int64_t t = 0; t < 10'000; t += 100) {
    const bool ok = l.at(ms(t)).allowed;
    EXPECT_EQ(ok, t % 1000 < 300) << t;
    allowed += ok ? 1 : 0;
    EXPECT_LE(l.state().log.size(), 3u);
  }
  EXPECT_EQ(allowed, 30);
  EXPECT_FALSE(l.idle(ms(9200) + ms(999)));
  EXPECT_TRUE(l.idle(ms(9200) + sec(1)));
}

TEST(SlidingLog, DeniedRequestsDoNotCount) {
  Log l(kThreePerSecond);
  EXPECT_EQ(l.allowed_of(2, 0), 2);
  EXPECT_EQ(l.allowed_of(100, ms(10), 2), 0);
  EXPECT_TRUE(l.at(ms(20)).allowed);
}

TEST(SlidingLog, CostWaitsForEnoughOfTheOldestEntriesToLeave) {
  Log l(kThreePerSecond);
  EXPECT_TRUE(l.at(0, 2).allowed);
  EXPECT_TRUE(l.at(ms(500), 1).allowed);
  const Decision d = l.at(ms(600), 2);  // the 2 from t=0 must leave: at 1s
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, ms(400));
  EXPECT_TRUE(l.at(sec(1), 2).allowed);
}

TEST(SlidingLog, CostAboveTheLimitIsNeverAllowed) {
  Log l(kThreePerSecond);
  const Decision d = l.at(0, 4);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, kNever);
  EXPECT_EQ(l.at(hours(1), kHugeCost).retry_after, kNever);
}

TEST(SlidingLog, AClockThatDoesNotMoveAdmitsTheLimitOnce) {
  Log l(kThreePerSecond);
  EXPECT_EQ(l.allowed_of(1000, sec(4)), 3);
}

TEST(SlidingLog, AJumpOfHoursEmptiesTheLog) {
  Log l(kThreePerSecond);
  EXPECT_EQ(l.allowed_of(3, 0), 3);
  EXPECT_EQ(l.allowed_of(5, hours(3)), 3);
  EXPECT_EQ(l.state().log.size(), 1u);  // only the entry at 3h
}

TEST(SlidingLog, TheLastInstantOfATraceStillDecides) {
  Log l(kThreePerSecond);
  EXPECT_EQ(l.allowed_of(3, 0), 3);
  EXPECT_EQ(l.allowed_of(5, kEndOfTime), 3);
  EXPECT_EQ(l.at(kEndOfTime).retry_after, sec(1));
}

TEST(SlidingLog, RetuneKeepsTheLogAndTheNewLimitApplies) {
  Log l(kThreePerSecond);
  EXPECT_EQ(l.allowed_of(3, 0), 3);
  l.retune(SlidingLog::Params{5, sec(1)}, ms(10));
  EXPECT_EQ(l.allowed_of(5, ms(10)), 2);
}

}  // namespace
}  // namespace sluice::core
