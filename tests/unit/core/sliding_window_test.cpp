// Sliding window counter: prev * (window - t mod window) / window + curr + cost <= limit, with
// prev and curr the allowed cost of the previous and the current fixed window. Unless a test
// says otherwise: limit 10 per 1s window.
#include "sluice/core/sliding_window.hpp"

#include <gtest/gtest.h>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using Window = test::TestLimiter<SlidingWindow>;

constexpr SlidingWindow::Params kTenPerSecond{10, sec(1)};

TEST(SlidingWindow, WeighsThePreviousWindowByHowMuchOfItStillOverlaps) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.allowed_of(12, ms(100)), 10);
  // At 1.25s three quarters of [0s, 1s) still overlap: 10 * 0.75 = 7.5, so 2 more fit.
  EXPECT_EQ(w.allowed_of(5, ms(1250)), 2);
  // 7.5 + 2 + 1 > 10 until 10 * (1000 - x) / 1000 <= 7, x = 300ms.
  const Decision d = w.at(ms(1250));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, ms(50));
  EXPECT_FALSE(w.at(ms(1299)).allowed);
  // Exactly 7 + 2 + 1 = 10: the integer comparison takes the boundary, no float rounding.
  EXPECT_TRUE(w.at(ms(1300)).allowed);
  // At 1.5s: 10 * 0.5 + 3 = 8, room for 2.
  EXPECT_EQ(w.allowed_of(5, ms(1500)), 2);
}

TEST(SlidingWindow, ARetryCanFallInTheNextWindow) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.allowed_of(10, ms(900)), 10);
  // Nothing more fits in [0s, 1s). In the next window the 10 weigh 10 * (1000 - x) / 1000,
  // and 9 + 1 <= 10 from x = 100ms: 1.1s, 150ms after 950ms.
  const Decision d = w.at(ms(950));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, ms(150));
  EXPECT_FALSE(w.at(ms(1099)).allowed);
  EXPECT_TRUE(w.at(ms(1100)).allowed);
}

TEST(SlidingWindow, ForgetsEverythingTwoWindowsLater) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.allowed_of(10, 0), 10);
  EXPECT_FALSE(w.idle(ms(1999)));
  EXPECT_TRUE(w.idle(sec(2)));
  EXPECT_EQ(w.allowed_of(20, sec(2)), 10);
}

TEST(SlidingWindow, DeniedRequestsDoNotCount) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.allowed_of(9, 0), 9);
  EXPECT_EQ(w.allowed_of(100, 0, 2), 0);
  EXPECT_TRUE(w.at(0).allowed);
}

TEST(SlidingWindow, CostCountsThatManyAndAboveTheLimitIsNeverAllowed) {
  Window w(kTenPerSecond);
  const Decision seven = w.at(0, 7);
  ASSERT_TRUE(seven.allowed);
  EXPECT_EQ(seven.remaining, 3);
  EXPECT_FALSE(w.at(0, 4).allowed);
  const Decision eleven = w.at(0, 11);
  EXPECT_FALSE(eleven.allowed);
  EXPECT_EQ(eleven.retry_after, kNever);
  EXPECT_TRUE(w.at(0, 3).allowed);
}

TEST(SlidingWindow, AClockThatDoesNotMoveAdmitsTheLimitOnce) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.allowed_of(1000, ms(700)), 10);
}

TEST(SlidingWindow, AJumpOfHoursStartsFromNothing) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.allowed_of(10, 0), 10);
  EXPECT_EQ(w.allowed_of(20, hours(3) + ms(1)), 10);
}

TEST(SlidingWindow, HugeCostsAndTheLastInstantOfATraceNeitherCrashNorWrap) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.at(0, kHugeCost).retry_after, kNever);
  EXPECT_EQ(w.allowed_of(10, 0), 10);
  EXPECT_EQ(w.allowed_of(20, kEndOfTime), 10);
  const Decision d = w.at(kEndOfTime);
  EXPECT_GT(d.retry_after, 0);
  EXPECT_LE(d.retry_after, sec(2));
}

TEST(SlidingWindow, RetuneKeepsTheCountsUnlessTheWindowChanges) {
  Window w(kTenPerSecond);
  EXPECT_EQ(w.allowed_of(10, 0), 10);
  w.retune(SlidingWindow::Params{15, sec(1)}, ms(10));
  EXPECT_EQ(w.allowed_of(10, ms(10)), 5);
  w.retune(SlidingWindow::Params{15, sec(5)}, ms(20));
  EXPECT_EQ(w.allowed_of(20, ms(20)), 15);
}

}  // namespace
}  // namespace sluice::core
