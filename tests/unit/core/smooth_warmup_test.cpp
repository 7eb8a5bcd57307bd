// Guava 31.1 SmoothWarmingUp. Unless a test says otherwise: rate 10/s (stable interval
// 100ms), warmup 1s, cold-factor 3. Guava's shape then is: threshold 0.5 * 1s / 100ms = 5
// permits, max 5 + 2 * 1s / (100ms + 300ms) = 10 permits, slope (300ms - 100ms) / 5 = 40ms
// per permit above the threshold, and idle time refills 1s / 10 = one permit per 100ms.
#include "sluice/core/smooth_warmup.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using WarmupLimiter = test::TestLimiter<SmoothWarmup>;

SmoothWarmup::Params ten_per_second() { return SmoothWarmup::make(per_second(10), sec(1), 3.0); }

// Delays of `n` acquire(1) calls at one instant.
std::vector<Nanos> delays_at(WarmupLimiter& l, Nanos now, int n) {
  std::vector<Nanos> out;
  for (int i = 0; i < n; ++i) out.push_back(l.at(now, 1, kForever).delay);
  return out;
}

TEST(SmoothWarmup, DerivesGuavasShape) {
  const SmoothWarmup::Params p = ten_per_second();
  EXPECT_DOUBLE_EQ(p.stable_interval_micros, 100'000);
  EXPECT_DOUBLE_EQ(p.threshold_permits, 5);
  EXPECT_DOUBLE_EQ(p.max_permits, 10);
  EXPECT_DOUBLE_EQ(p.slope, 40'000);
  EXPECT_DOUBLE_EQ(SmoothWarmupShape::cool_down_interval(p), 100'000);
}

TEST(SmoothWarmup, StartsColdAndSpeedsUpToTheStableRate) {
  // Taking the permit above p stored costs the trapezoid under 100ms + 40ms * (p - 5):
  // from 10 stored, (300 + 260) / 2 = 280ms; then 240, 200, 160, 120; below 5, 100ms each.
  WarmupLimiter l(ten_per_second());
  EXPECT_EQ(delays_at(l, 0, 8), (std::vector<Nanos>{0, ms(280), ms(520), ms(720), ms(880), ms(1000),
                                                    ms(1100), ms(1200)}));
}

TEST(SmoothWarmup, TryAcquireOnAColdLimiterRefusesWhatAcquireWouldDelay) {
  WarmupLimiter l(ten_per_second());
  EXPECT_TRUE(l.at(0).allowed);
  const Decision second = l.at(0);
  EXPECT_FALSE(second.allowed);
  EXPECT_EQ(second.retry_after, ms(280));
}

TEST(SmoothWarmup, ALargeRequestPaysTheWholeWarmupAndThenTheRateIsStable) {
  // 10 permits from cold: the trapezoid over 5..10 is 5 * (300 + 100) / 2 = 1000ms, plus 5
  // below the threshold at 100ms: 1500ms, charged to the next caller.
  WarmupLimiter l(ten_per_second(), kForever);
  EXPECT_EQ(l.at(0, 10).delay, 0);
  EXPECT_EQ(delays_at(l, 0, 3), (std::vector<Nanos>{ms(1500), ms(1600), ms(1700)}));
}

TEST(SmoothWarmup, IdleTimeCoolsItDownAgain) {
  WarmupLimiter l(ten_per_second(), kForever);
  EXPECT_EQ(l.at(0, 10).delay, 0);      // warm: next ticket at 1.5s, nothing stored
  EXPECT_TRUE(l.at(ms(1500)).allowed);  // next ticket 1.6s
  // 1s of idle after 1.6s refills 10 permits (one per 100ms): fully cold, as at the start.
  EXPECT_FALSE(l.idle(ms(2599)));
  EXPECT_TRUE(l.idle(ms(2600)));
  EXPECT_EQ(delays_at(l, ms(2600), 3), (std::vector<Nanos>{0, ms(280), ms(520)}));
}

TEST(SmoothWarmup, AClockThatDoesNotMoveAdmitsOneRequest) {
  WarmupLimiter l(ten_per_second());
  EXPECT_EQ(l.allowed_of(1000, sec(2)), 1);
}

TEST(SmoothWarmup, AJumpOfHoursLeavesItExactlyCold) {
  WarmupLimiter l(ten_per_second(), kForever);
  EXPECT_EQ(l.at(0, 10).delay, 0);
  EXPECT_EQ(l.at(hours(2)).delay, 0);
  EXPECT_EQ(l.at(hours(2)).delay, ms(280));
}

TEST(SmoothWarmup, AHugeCostAndTheLastInstantOfATraceNeitherCrashNorWrap) {
  WarmupLimiter l(ten_per_second(), kForever);
  EXPECT_TRUE(l.at(0, kHugeCost).allowed);
  EXPECT_TRUE(l.at(0).overflow);  // its ticket is at the end of int64 micros
  EXPECT_GT(l.at(0, 1, 0).retry_after, hours(24 * 365 * 100));

  WarmupLimiter fresh(ten_per_second(), kForever);
  EXPECT_EQ(delays_at(fresh, kEndOfTime, 2), (std::vector<Nanos>{0, ms(280)}));
}

TEST(SmoothWarmup, RetuneRescalesStoredPermitsSoAColdLimiterStaysCold) {
  // At 20/s: stable 50ms, cold 150ms, threshold 10, max 20, slope 10ms. 10 of 10 stored
  // become 20 of 20; the first permit above 20 costs (150 + 140) / 2 = 145ms.
  WarmupLimiter l(ten_per_second(), kForever);
  EXPECT_EQ(l.at(0).delay, 0);                                        // 9 stored, next ticket 280ms
  l.retune(SmoothWarmup::make(per_second(20), sec(1), 3.0), sec(5));  // 10 stored by now
  EXPECT_EQ(delays_at(l, sec(5), 2), (std::vector<Nanos>{0, ms(145)}));
}

}  // namespace
}  // namespace sluice::core
