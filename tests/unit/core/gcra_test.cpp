// GCRA as redis-cell computes it. Unless a test says otherwise: rate 10/s, so the emission
// interval T is 100ms, and burst (redis-cell's max_burst) 4, so limit = 5 and DVT = 500ms.
#include "sluice/core/gcra.hpp"

#include <gtest/gtest.h>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using Cell = test::TestLimiter<Gcra>;

Gcra::Params ten_per_second_burst_4() { return Gcra::make(per_second(10), 4); }

TEST(Gcra, DerivesIntervalAndToleranceAsRedisCellDoes) {
  const Gcra::Params p = ten_per_second_burst_4();
  EXPECT_EQ(p.interval, ms(100));
  EXPECT_EQ(p.tolerance, ms(500));  // T * (burst + 1)
  EXPECT_EQ(Gcra::limit(p), 5);
  // 3/s: trunc(1e9 ns / 3) = 333333333 ns, the fraction dropped as redis-cell drops it.
  EXPECT_EQ(Gcra::make(Rate{3, sec(1)}, 0).interval, 333'333'333);
}

TEST(Gcra, AnswersTheRedisCellReadmeExample) {
  // CL.THROTTLE user123 15 30 60 -> limited 0, limit 16, remaining 15, retry -1, reset 2s.
  Cell c(Gcra::make(Rate{30, sec(60)}, 15));
  const Decision d = c.at(sec(1000));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.limit, 16);
  EXPECT_EQ(d.remaining, 15);
  EXPECT_EQ(d.reset_after, sec(2));  // one emission interval: 60s / 30
}

TEST(Gcra, LimitPlusOneAtOnceThenOnePerInterval) {
  Cell c(ten_per_second_burst_4());
  for (std::int64_t left = 4; left >= 0; --left) {
    const Decision d = c.at(0);
    ASSERT_TRUE(d.allowed);
    EXPECT_EQ(d.remaining, left);
  }
  const Decision sixth = c.at(0);  // TAT 500ms; new TAT 600ms - DVT 500ms = 100ms from now
  EXPECT_FALSE(sixth.allowed);
  EXPECT_EQ(sixth.retry_after, ms(100));
  EXPECT_EQ(sixth.remaining, 0);
  EXPECT_FALSE(c.at(ms(99)).allowed);
  // redis-cell compares diff < 0 strictly: exactly at the allowed instant the request passes.
  EXPECT_TRUE(c.at(ms(100)).allowed);
  for (std::int64_t t = 200; t <= 2000; t += 100) EXPECT_TRUE(c.at(ms(t)).allowed) << t;
  EXPECT_FALSE(c.at(ms(2000)).allowed);
}

TEST(Gcra, IdleTimeRestoresTheFullLimitAndNoMore) {
  Cell c(ten_per_second_burst_4());
  EXPECT_EQ(c.allowed_of(5, 0), 5);
  EXPECT_FALSE(c.idle(ms(499)));
  EXPECT_TRUE(c.idle(ms(500)));  // TAT reached: as if the key were new
  EXPECT_EQ(c.allowed_of(10, sec(10)), 5);
}

TEST(Gcra, CostAdvancesTheTatByThatManyIntervals) {
  Cell c(ten_per_second_burst_4());
  const Decision three = c.at(0, 3);
  ASSERT_TRUE(three.allowed);
  EXPECT_EQ(three.remaining, 2);  // (DVT 500 - ttl 300) / 100
  EXPECT_EQ(three.reset_after, ms(300));
  const Decision again = c.at(0, 3);  // new TAT 600ms - 500ms
  EXPECT_FALSE(again.allowed);
  EXPECT_EQ(again.retry_after, ms(100));
  EXPECT_TRUE(c.at(0, 2).allowed);
}

TEST(Gcra, CostAboveTheLimitIsNeverAllowed) {
  // redis-cell test case: 6 > limit 5 on a fresh key: limited, remaining 5, reset 0, retry -1.
  Cell c(ten_per_second_burst_4());
  const Decision d = c.at(0, 6);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, kNever);
  EXPECT_EQ(d.remaining, 5);
  EXPECT_EQ(d.reset_after, 0);
  EXPECT_EQ(c.at(hours(1), 6, kForever).retry_after, kNever);
  EXPECT_TRUE(c.at(hours(1), 5).allowed);
}

TEST(Gcra, AClockThatDoesNotMoveAdmitsNothingMore) {
  Cell c(ten_per_second_burst_4());
  EXPECT_EQ(c.allowed_of(5, sec(3)), 5);
  EXPECT_EQ(c.allowed_of(1000, sec(3)), 0);
  EXPECT_EQ(c.state().tat, sec(3) + ms(500));  // denials leave the TAT alone
}

TEST(Gcra, AJumpOfHoursRestoresExactlyTheLimit) {
  Cell c(ten_per_second_burst_4());
  EXPECT_EQ(c.allowed_of(5, 0), 5);
  EXPECT_EQ(c.allowed_of(10, hours(5)), 5);
}

TEST(Gcra, WaitModeReservesTheNextSlotsAndReportsTheirDelay) {
  Cell c(ten_per_second_burst_4(), ms(250));
  EXPECT_EQ(c.allowed_of(5, 0), 5);
  EXPECT_EQ(c.at(0).delay, ms(100));
  EXPECT_EQ(c.at(0).delay, ms(200));
  const Decision third = c.at(0);
  EXPECT_FALSE(third.allowed);
  EXPECT_EQ(third.retry_after, ms(300));
  EXPECT_EQ(c.state().tat, ms(700));  // 5 + 2 reservations; the denial reserved nothing
}

TEST(Gcra, HugeCostsAndGapsNeitherCrashNorWrap) {
  Cell c(ten_per_second_burst_4());
  const Decision huge = c.at(0, kHugeCost, kForever);
  EXPECT_FALSE(huge.allowed);
  EXPECT_EQ(huge.retry_after, kNever);
  EXPECT_EQ(c.allowed_of(5, 0), 5);
  const Nanos century = hours(24 * 365 * 100);
  EXPECT_EQ(c.allowed_of(6, century), 5);
  EXPECT_EQ(c.at(century).retry_after, ms(100));
}

TEST(Gcra, ATatBeyondTheEndOfTimeIsReportedAsOverflowAndChargesNothing) {
  // At the last instant a trace can name, TAT = now + 100ms no longer fits in int64 ns.
  Cell c(ten_per_second_burst_4());
  EXPECT_EQ(c.allowed_of(5, 0), 5);
  const Decision d = c.at(kEndOfTime);
  EXPECT_FALSE(d.allowed);
  EXPECT_TRUE(d.overflow);
  EXPECT_EQ(c.state().tat, ms(500));
}

TEST(Gcra, RetuneKeepsTheTatSoTheBacklogCarriesOver) {
  Cell c(ten_per_second_burst_4());
  EXPECT_EQ(c.allowed_of(5, 0), 5);  // TAT 500ms
  // 1/s, burst 4: T 1s, DVT 5s. TAT 500ms + 1s - 5s <= 0: four more pass now, not five.
  c.retune(Gcra::make(per_second(1), 4), 0);
  EXPECT_EQ(c.allowed_of(10, 0), 4);  // TAT 500ms + 4s = 4.5s <= 5s; a fifth needs 5.5s
}

TEST(Gcra, ParamsThatOverflowAreInvalid) {
  EXPECT_TRUE(Gcra::valid(ten_per_second_burst_4()));
  EXPECT_FALSE(Gcra::valid(Gcra::make(Rate{1, hours(1)}, std::int64_t{1} << 62)));
  EXPECT_FALSE(Gcra::valid(Gcra::make(Rate{2'000'000'000, sec(1)}, 1)));  // T below 1ns
}

}  // namespace
}  // namespace sluice::core
