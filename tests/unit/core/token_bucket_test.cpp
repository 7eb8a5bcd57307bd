// Token bucket as golang.org/x/time/rate computes it: capacity `burst`, starts full, continuous
// refill. Unless a test says otherwise: rate 10/s (one token per 100ms), burst 5.
#include "sluice/core/token_bucket.hpp"

#include <gtest/gtest.h>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using Bucket = test::TestLimiter<TokenBucket>;

TokenBucket::Params ten_per_second_burst_5() { return TokenBucket::make(per_second(10), 5); }

TEST(TokenBucket, StartsFullSoABurstPassesAtOnceThenOneTokenPer100ms) {
  Bucket b(ten_per_second_burst_5());
  for (std::int64_t left = 4; left >= 0; --left) {
    const Decision d = b.at(0);
    ASSERT_TRUE(d.allowed);
    EXPECT_EQ(d.remaining, left);
    EXPECT_EQ(d.delay, 0);
  }
  const Decision sixth = b.at(0);
  EXPECT_FALSE(sixth.allowed);
  EXPECT_EQ(sixth.retry_after, ms(100));  // one token at 10/s
  EXPECT_EQ(sixth.limit, 5);

  // Steady traffic at the refill rate passes; faster traffic does not.
  EXPECT_TRUE(b.at(ms(100)).allowed);
  const Decision early = b.at(ms(150));  // half a token so far
  EXPECT_FALSE(early.allowed);
  EXPECT_EQ(early.retry_after, ms(50));
  EXPECT_TRUE(b.at(ms(200)).allowed);
  EXPECT_TRUE(b.at(ms(300)).allowed);
}

TEST(TokenBucket, IdleTimeRefillsUpToBurstAndNoFurther) {
  Bucket b(ten_per_second_burst_5());
  EXPECT_EQ(b.allowed_of(10, 0), 5);
  EXPECT_FALSE(b.idle(ms(499)));
  EXPECT_TRUE(b.idle(ms(500)));  // 5 tokens back after 500ms: same as a key never seen
  // 10 s idle would be 100 tokens, but the bucket holds 5.
  EXPECT_EQ(b.allowed_of(10, sec(10)), 5);
}

TEST(TokenBucket, CostTakesThatManyTokens) {
  Bucket b(ten_per_second_burst_5());
  const Decision three = b.at(0, 3);
  ASSERT_TRUE(three.allowed);
  EXPECT_EQ(three.remaining, 2);
  const Decision again = b.at(0, 3);
  EXPECT_FALSE(again.allowed);
  EXPECT_EQ(again.retry_after, ms(100));  // 2 tokens there, 1 missing
  EXPECT_TRUE(b.at(0, 2).allowed);
}

TEST(TokenBucket, CostAboveBurstIsNeverAllowedInAnyMode) {
  Bucket b(ten_per_second_burst_5());
  const Decision d = b.at(0, 6);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, kNever);
  EXPECT_FALSE(b.at(hours(1), 6).allowed);
  const Decision waiting = b.at(hours(1), 6, kForever);
  EXPECT_FALSE(waiting.allowed);
  EXPECT_EQ(waiting.retry_after, kNever);
  // The refused requests took nothing.
  EXPECT_EQ(b.allowed_of(5, hours(1)), 5);
}

TEST(TokenBucket, AClockThatDoesNotMoveRefillsNothing) {
  Bucket b(ten_per_second_burst_5());
  EXPECT_EQ(b.allowed_of(5, sec(7)), 5);
  EXPECT_EQ(b.allowed_of(1000, sec(7)), 0);
  EXPECT_EQ(b.at(sec(7)).retry_after, ms(100));
}

TEST(TokenBucket, AClockThatStepsBackRefillsNothingUntilItPassesTheLastUpdate) {
  Bucket b(ten_per_second_burst_5());
  EXPECT_EQ(b.allowed_of(5, sec(10)), 5);
  // x/time/rate's advance: last = min(last, now), so earlier instants see no elapsed time;
  // a denial writes nothing, so the bucket's clock stays at 10s.
  EXPECT_EQ(b.allowed_of(5, sec(5)), 0);
  EXPECT_FALSE(b.at(sec(9)).allowed);
  EXPECT_TRUE(b.at(sec(10) + ms(100)).allowed);
}

TEST(TokenBucket, AJumpOfHoursRefillsToExactlyBurst) {
  Bucket b(ten_per_second_burst_5());
  EXPECT_EQ(b.allowed_of(5, 0), 5);
  EXPECT_EQ(b.allowed_of(10, hours(3)), 5);
}

TEST(TokenBucket, HugeCostsAndGapsNeitherCrashNorWrap) {
  Bucket b(ten_per_second_burst_5());
  const Decision huge = b.at(0, kHugeCost);
  EXPECT_FALSE(huge.allowed);
  EXPECT_EQ(huge.retry_after, kNever);
  const Decision huge_wait = b.at(0, kHugeCost, kForever);
  EXPECT_FALSE(huge_wait.allowed);
  EXPECT_EQ(huge_wait.retry_after, kNever);
  EXPECT_EQ(b.allowed_of(5, 0), 5);
  // From t=0 to the last instant a trace can name: full again, no more.
  EXPECT_EQ(b.allowed_of(6, kEndOfTime), 5);
  const Decision d = b.at(kEndOfTime);
  EXPECT_EQ(d.retry_after, ms(100));
  EXPECT_GE(d.reset_after, 0);
}

TEST(TokenBucket, WaitModeReservesFutureTokensAndReportsTheDelay) {
  Bucket b(ten_per_second_burst_5(), ms(250));
  EXPECT_EQ(b.allowed_of(5, 0), 5);
  const Decision first = b.at(0);  // reserves the token due at 100ms
  ASSERT_TRUE(first.allowed);
  EXPECT_EQ(first.delay, ms(100));
  EXPECT_EQ(b.at(0).delay, ms(200));
  const Decision third = b.at(0);  // would wait 300ms > 250ms
  EXPECT_FALSE(third.allowed);
  EXPECT_EQ(third.delay, 0);
  EXPECT_EQ(third.retry_after, ms(300));
  // The cancelled reservation gave its token back: at 100ms the next one waits 200ms again.
  EXPECT_EQ(b.at(ms(100)).delay, ms(200));
}

TEST(TokenBucket, RetuneKeepsTheTokensAccruedUnderTheOldRate) {
  // x/time/rate SetLimitAt: advance to now under the old rate, then the new rate applies.
  Bucket b(ten_per_second_burst_5());
  EXPECT_EQ(b.allowed_of(5, 0), 5);
  b.retune(TokenBucket::make(per_second(1), 5), ms(200));  // 2 tokens accrued at 10/s
  EXPECT_EQ(b.allowed_of(3, ms(200)), 2);
  EXPECT_EQ(b.at(ms(200)).retry_after, sec(1));  // one token at 1/s
}

TEST(TokenBucket, RetuneToASmallerBurstCapsTheStoredTokens) {
  Bucket b(ten_per_second_burst_5());
  EXPECT_TRUE(b.at(0).allowed);  // 4 tokens left
  b.retune(TokenBucket::make(per_second(10), 2), 0);
  EXPECT_EQ(b.allowed_of(5, 0), 2);
}

}  // namespace
}  // namespace sluice::core
