// Fixed window counter: windows at multiples of `window` from t=0, allowed iff count + cost <=
// limit, denials not counted. Unless a test says otherwise: limit 3 per 1s window.
#include "sluice/core/fixed_window.hpp"

#include <gtest/gtest.h>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using Window = test::TestLimiter<FixedWindow>;

constexpr FixedWindow::Params kThreePerSecond{3, sec(1)};

TEST(FixedWindow, AllowsTheLimitPerWindowAndRetriesAtTheNextWindow) {
  Window w(kThreePerSecond);
  for (std::int64_t left = 2; left >= 0; --left) {
    const Decision d = w.at(ms(250));
    ASSERT_TRUE(d.allowed);
    EXPECT_EQ(d.remaining, left);
    EXPECT_EQ(d.reset_after, ms(750));
  }
  const Decision fourth = w.at(ms(400));
  EXPECT_FALSE(fourth.allowed);
  EXPECT_EQ(fourth.retry_after, ms(600));  // the window [0s, 1s) ends
  EXPECT_EQ(w.allowed_of(5, sec(1)), 3);
}

TEST(FixedWindow, LetsTwiceTheLimitThroughAcrossABoundary) {
  // The flaw the sliding algorithms fix: 3 at 999ms and 3 at 1000ms are 6 requests in 1ms,
  // twice the limit, because they fall in two windows.
  Window w(kThreePerSecond);
  EXPECT_EQ(w.allowed_of(3, ms(999)), 3);
  EXPECT_EQ(w.allowed_of(3, ms(1000)), 3);
}

TEST(FixedWindow, DeniedRequestsDoNotCount) {
  Window w(kThreePerSecond);
  EXPECT_EQ(w.allowed_of(2, 0), 2);
  EXPECT_EQ(w.allowed_of(100, 0, 2), 0);  // 2 + 2 > 3, a hundred times
  EXPECT_TRUE(w.at(0).allowed);           // still room for 1
}

TEST(FixedWindow, CostCountsThatMany) {
  Window w(kThreePerSecond);
  const Decision d = w.at(0, 2);
  ASSERT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 1);
  EXPECT_FALSE(w.at(0, 2).allowed);
  EXPECT_TRUE(w.at(0, 1).allowed);
}

TEST(FixedWindow, CostAboveTheLimitIsNeverAllowed) {
  Window w(kThreePerSecond);
  const Decision d = w.at(0, 4);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, kNever);
  EXPECT_EQ(d.remaining, 3);
}

TEST(FixedWindow, AClockThatDoesNotMoveStaysInOneWindow) {
  Window w(kThreePerSecond);
  EXPECT_EQ(w.allowed_of(1000, ms(1500)), 3);
}

TEST(FixedWindow, AJumpOfHoursStartsAFreshWindow) {
  Window w(kThreePerSecond);
  EXPECT_EQ(w.allowed_of(3, 0), 3);
  EXPECT_TRUE(w.idle(hours(2)));
  EXPECT_EQ(w.allowed_of(5, hours(2) + ms(10)), 3);
}

TEST(FixedWindow, HugeCostsAndTheLastInstantOfATraceNeitherCrashNorWrap) {
  Window w(FixedWindow::Params{3, hours(1)});
  EXPECT_EQ(w.at(0, kHugeCost).retry_after, kNever);
  EXPECT_EQ(w.allowed_of(5, kEndOfTime), 3);
  // The hour-long window holding the last instant ends after int64 nanoseconds do; what is
  // reported is still a time within one window, never a wrapped negative one.
  const Decision d = w.at(kEndOfTime);
  EXPECT_FALSE(d.allowed);
  EXPECT_GT(d.retry_after, 0);
  EXPECT_LE(d.retry_after, hours(1));
  EXPECT_GT(d.reset_after, 0);
}

TEST(FixedWindow, RetuneKeepsTheCountUnlessTheWindowChanges) {
  Window w(kThreePerSecond);
  EXPECT_EQ(w.allowed_of(3, 0), 3);
  w.retune(FixedWindow::Params{5, sec(1)}, ms(10));  // same window: 3 counted, room for 2
  EXPECT_EQ(w.allowed_of(5, ms(10)), 2);
  w.retune(FixedWindow::Params{5, sec(2)}, ms(20));  // new window length: counting restarts
  EXPECT_EQ(w.allowed_of(10, ms(20)), 5);
}

}  // namespace
}  // namespace sluice::core
