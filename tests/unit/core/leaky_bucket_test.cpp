// Leaky bucket as nginx 1.22 limit_req computes it: a millisecond clock, the excess in 1/1000
// requests, excess = max(0, excess - rate*ms/1000 + 1000*cost), reject when excess > burst.
// Unless a test says otherwise: rate 10/s (10000 milli-requests per second), burst 2.
#include "sluice/core/leaky_bucket.hpp"

#include <gtest/gtest.h>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using Bucket = test::TestLimiter<LeakyBucket>;

LeakyBucket::Params ten_per_second(std::int64_t burst, std::int64_t delay) {
  return LeakyBucket::make(per_second(10), burst, delay);
}
LeakyBucket::Params nodelay_burst_2() { return ten_per_second(2, LeakyBucket::kNoDelay); }

TEST(LeakyBucket, HoldsTheRateAsWholeMilliRequestsPerSecondLikeNginx) {
  EXPECT_EQ(LeakyBucket::make(per_second(10), 0, 0).rate_milli, 10'000);
  EXPECT_EQ(LeakyBucket::make(Rate{100, kNanosPerMinute}, 0, 0).rate_milli, 1'666);  // truncated
  EXPECT_EQ(LeakyBucket::make(Rate{1, kNanosPerMinute}, 0, 0).rate_milli, 16);
  EXPECT_EQ(LeakyBucket::make(Rate{1, kNanosPerHour}, 0, 0).rate_milli, 0);  // below 1/1000 r/s
}

TEST(LeakyBucket, BurstPlusOnePassAtOnceEachDelayedByItsExcess) {
  // delay=0: every request above the first waits excess/rate. The first request of a new key
  // is not counted (nginx creates the node with excess 0).
  Bucket b(ten_per_second(2, 0));
  const Decision first = b.at(0);
  ASSERT_TRUE(first.allowed);
  EXPECT_EQ(first.delay, 0);
  EXPECT_EQ(first.limit, 3);
  EXPECT_EQ(b.at(0).delay, ms(100));  // excess 1000 -> 1000 * 1000 / 10000 ms
  EXPECT_EQ(b.at(0).delay, ms(200));  // excess 2000
  const Decision fourth = b.at(0);    // excess 3000 > burst 2000
  EXPECT_FALSE(fourth.allowed);
  EXPECT_EQ(fourth.delay, 0);
  EXPECT_EQ(fourth.retry_after, ms(100));  // 1000 must leak: 100ms at 10/s
}

TEST(LeakyBucket, NodelayLetsTheWholeBurstThroughUndelayed) {
  Bucket b(nodelay_burst_2());
  for (int i = 0; i < 3; ++i) {
    const Decision d = b.at(0);
    ASSERT_TRUE(d.allowed);
    EXPECT_EQ(d.delay, 0);
  }
  EXPECT_FALSE(b.at(0).allowed);
}

TEST(LeakyBucket, DelayNLetsNExcessRequestsThroughUndelayed) {
  Bucket b(ten_per_second(2, 1));
  EXPECT_EQ(b.at(0).delay, 0);        // excess 0
  EXPECT_EQ(b.at(0).delay, 0);        // excess 1000, not above delay 1000
  EXPECT_EQ(b.at(0).delay, ms(100));  // (2000 - 1000) * 1000 / 10000
}

TEST(LeakyBucket, SteadyTrafficAtTheRatePassesAfterTheBurst) {
  Bucket b(nodelay_burst_2());
  EXPECT_EQ(b.allowed_of(4, 0), 3);
  for (std::int64_t t = 100; t <= 1000; t += 100) {
    EXPECT_TRUE(b.at(ms(t)).allowed) << t;   // 1000 leaked, 1000 added
    EXPECT_FALSE(b.at(ms(t)).allowed) << t;  // the bucket is at its burst again
  }
}

TEST(LeakyBucket, TimeIsCutToWholeMillisecondsAsNginxSeesIt) {
  // Burst 0 at 10/s: the next request needs a full 100ms leak. 99.9ms counts as 99ms, which
  // leaks 990 of the 1000 the request adds, so 10 are left over the burst of 0.
  Bucket b(ten_per_second(0, LeakyBucket::kNoDelay));
  EXPECT_TRUE(b.at(us(900)).allowed);  // ms 0
  EXPECT_FALSE(b.at(us(99'900)).allowed);
  EXPECT_TRUE(b.at(ms(100)).allowed);
}

TEST(LeakyBucket, IsIdleOnlyAfterNginxsSixtySecondsWithNothingLeftToLeak) {
  Bucket b(nodelay_burst_2());
  EXPECT_TRUE(b.idle(0));
  EXPECT_EQ(b.allowed_of(3, 0), 3);  // excess 2000, drained after 200ms
  EXPECT_FALSE(b.idle(sec(1)));
  EXPECT_FALSE(b.idle(ms(59'999)));
  EXPECT_TRUE(b.idle(sec(60)));
  // An hour idle: the whole burst again, and no more.
  EXPECT_EQ(b.allowed_of(5, hours(1)), 3);
}

TEST(LeakyBucket, CostAddsThatManyThousandsToTheExcess) {
  Bucket b(nodelay_burst_2());
  ASSERT_TRUE(b.at(0).allowed);     // new key: excess 0
  ASSERT_TRUE(b.at(0, 2).allowed);  // 0 + 2 * 1000 = 2000, not above 2000
  EXPECT_EQ(b.state().excess, 2000);
  const Decision next = b.at(ms(100), 2);  // 2000 - 1000 + 2000 = 3000 > 2000
  EXPECT_FALSE(next.allowed);
  EXPECT_EQ(next.retry_after, ms(100));  // 2000 must leak since the last update at 0: 200ms
  EXPECT_TRUE(b.at(ms(200), 2).allowed);
}

TEST(LeakyBucket, AFirstRequestPassesWhateverItsCostAndLeavesNoExcess) {
  // nginx creates the node with excess 0 and checks nothing; the cost counts from then on.
  Bucket b(nodelay_burst_2());
  const Decision d = b.at(0, 50);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.delay, 0);
  EXPECT_EQ(b.state().excess, 0);
  EXPECT_EQ(b.allowed_of(5, 0), 2);  // 1000, 2000, then 3000 > 2000
}

TEST(LeakyBucket, AKnownKeyLetsACostAboveBurstPlusOneThroughOnceEnoughHasLeaked) {
  // nginx clamps at 0 after adding the request, so a leak larger than the stored excess
  // offsets the new cost: at 200ms, 0 - 10000 * 200 / 1000 + 4 * 1000 = 2000, not above 2000.
  // Only a new key (no leak yet) answers kNever; retry_after counts on the leak too.
  Bucket b(nodelay_burst_2());
  ASSERT_TRUE(b.at(0).allowed);     // excess 0 at ms 0
  const Decision now = b.at(0, 4);  // 0 - 0 + 4000 > 2000
  EXPECT_FALSE(now.allowed);
  EXPECT_EQ(now.retry_after, ms(200));  // 4000 - 2000 must leak
  EXPECT_FALSE(b.at(ms(199), 4).allowed);
  EXPECT_TRUE(b.at(ms(200), 4).allowed);
  EXPECT_EQ(b.state().excess, 2000);
}

TEST(LeakyBucket, AClockThatDoesNotMoveLeaksNothing) {
  Bucket b(nodelay_burst_2());
  EXPECT_EQ(b.allowed_of(3, sec(5)), 3);
  EXPECT_EQ(b.allowed_of(1000, sec(5)), 0);
  EXPECT_EQ(b.state().excess, 2000);
  EXPECT_EQ(b.state().last_ms, 5000);
}

TEST(LeakyBucket, AClockThatStepsBackLeaksNothingOrOneMillisecondPastAMinute) {
  // nginx: ms < 0 counts as 0 (and keeps `last`); ms < -60000 counts as 1.
  Bucket b(nodelay_burst_2());
  EXPECT_EQ(b.allowed_of(3, sec(120)), 3);                       // excess 2000 at 120s
  EXPECT_FALSE(b.at(sec(119)).allowed);                          // 2000 - 0 + 1000
  b.retune(ten_per_second(3, LeakyBucket::kNoDelay), sec(119));  // burst 3: room for 1
  const Decision back = b.at(0);  // 2 minutes back: 2000 - 10000 * 1 / 1000 + 1000 = 2990
  ASSERT_TRUE(back.allowed);
  EXPECT_EQ(b.state().excess, 2990);
  EXPECT_EQ(b.state().last_ms, 0);
}

TEST(LeakyBucket, HugeCostsAndGapsNeitherCrashNorWrap) {
  Bucket b(nodelay_burst_2());
  EXPECT_TRUE(b.at(0, kHugeCost).allowed);  // a first request, as above
  EXPECT_EQ(b.allowed_of(3, 0), 2);
  const Decision known = b.at(0, kHugeCost);  // its leak would end centuries past int64
  EXPECT_FALSE(known.allowed);
  EXPECT_EQ(known.retry_after, kNever);
  EXPECT_EQ(b.allowed_of(5, kEndOfTime), 3);
  // The last instant a trace names is 775us into its millisecond; nginx counts whole ms, so
  // the next 100ms of leak is done 99.225ms later.
  EXPECT_EQ(b.at(kEndOfTime).retry_after, ms(100) - us(775));
}

TEST(LeakyBucket, RetuneKeepsTheExcessAndLeaksAtTheNewRate) {
  Bucket b(nodelay_burst_2());
  EXPECT_EQ(b.allowed_of(3, 0), 3);  // excess 2000
  b.retune(LeakyBucket::make(per_second(1), 2, LeakyBucket::kNoDelay), 0);
  const Decision d = b.at(ms(100));  // 2000 - 1000 * 100 / 1000 + 1000 = 2900 > 2000
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, ms(900));  // 1000 must leak at 1/s: 1000ms after the last update
  EXPECT_TRUE(b.at(sec(1)).allowed);
}

}  // namespace
}  // namespace sluice::core
