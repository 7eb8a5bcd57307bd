// Several limits on one request decided as one: allowed only if all allow, and a denial by
// any of them charges none (nginx's check-all-then-commit).
#include "sluice/local/limit_set.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "support/limiter.hpp"

namespace sluice::local {
namespace {

using core::Decision;
using namespace test::units;

LimitSet limits(std::initializer_list<const char*> texts, core::Nanos max_wait = 0) {
  std::vector<spec::LimitSpec> specs;
  for (const char* text : texts) {
    auto spec = spec::parse_limit_spec(text);
    EXPECT_TRUE(spec) << text << ": " << (spec ? "" : spec.error());
    if (spec) specs.push_back(*spec);
  }
  return LimitSet(specs, max_wait);
}

TEST(LimitSet, ADenialByOneLimitLeavesTheOthersTokensAlone) {
  // The bucket holds 5 tokens and refills 1 per hour; the window allows 3 per second.
  LimitSet set = limits({"token-bucket:rate=1/h,burst=5", "fixed-window:limit=3,window=1s"});
  ASSERT_EQ(set.size(), 2u);
  const Decision big = set.decide("k", 0, 4);  // the bucket has 4, the window can never take 4
  EXPECT_FALSE(big.allowed);
  EXPECT_EQ(big.retry_after, core::kNever);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(set.decide("k", 0, 1).allowed);
  EXPECT_FALSE(set.decide("k", 0, 1).allowed);  // the window is full; the bucket still has 2
  // Next window: exactly the bucket's 2 remaining tokens pass. Had the cost-4 request or the
  // window's denial charged the bucket, fewer would.
  EXPECT_TRUE(set.decide("k", sec(1), 1).allowed);
  EXPECT_TRUE(set.decide("k", sec(1), 1).allowed);
  EXPECT_FALSE(set.decide("k", sec(1), 1).allowed);
}

TEST(LimitSet, ADenialByOneLimitLeavesTheOthersCountAlone) {
  // The bucket allows 1 per second; the window 2 per 10s.
  LimitSet set = limits({"token-bucket:rate=1/s,burst=1", "fixed-window:limit=2,window=10s"});
  EXPECT_TRUE(set.decide("k", 0, 1).allowed);
  const Decision early = set.decide("k", ms(500), 1);  // the bucket has half a token
  EXPECT_FALSE(early.allowed);
  EXPECT_EQ(early.retry_after, ms(500));
  EXPECT_TRUE(set.decide("k", sec(1), 1).allowed);   // the window counted 1, not 2
  const Decision full = set.decide("k", sec(2), 1);  // now the window has its 2
  EXPECT_FALSE(full.allowed);
  EXPECT_EQ(full.retry_after, sec(8));
}

TEST(LimitSet, RetryAfterIsTheLongestAmongTheLimitsThatDenied) {
  // gcra 1/s with burst 0 allows 1 per second; the bucket 10/s with burst 1.
  LimitSet set = limits({"token-bucket:rate=10/s,burst=1", "gcra:rate=1/s,burst=0"});
  EXPECT_TRUE(set.decide("k", 0, 1).allowed);
  const Decision d = set.decide("k", 0, 1);  // bucket: 100ms, gcra: 1s
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.delay, 0);
  EXPECT_EQ(d.retry_after, sec(1));
}

TEST(LimitSet, InWaitModeTheDelayIsTheLongestAmongTheLimits) {
  LimitSet set = limits({"token-bucket:rate=10/s,burst=1", "gcra:rate=5/s,burst=0"}, sec(1));
  EXPECT_EQ(set.decide("k", 0, 1).delay, 0);
  EXPECT_EQ(set.decide("k", 0, 1).delay, ms(200));  // bucket: 100ms, gcra: 200ms
}

TEST(LimitSet, EachKeyHasItsOwnState) {
  LimitSet set = limits({"token-bucket:rate=1/h,burst=2", "sliding-log:limit=5,window=1s"});
  EXPECT_TRUE(set.decide("alice", 0, 2).allowed);
  EXPECT_FALSE(set.decide("alice", 0, 1).allowed);
  EXPECT_TRUE(set.decide("bob", 0, 2).allowed);
}

TEST(LimitSet, OneLimitBehavesAsThatLimitAlone) {
  // x/time/rate in wait mode: a cancelled reservation still moves the bucket's clock, and the
  // single-limit path keeps that (commit_on_denial).
  LimitSet set = limits({"token-bucket:rate=10/s,burst=1"}, ms(150));
  test::TestLimiter<core::TokenBucket> alone(core::TokenBucket::make(per_second(10), 1), ms(150));
  for (const core::Nanos t : {ms(0), ms(0), ms(0), ms(50), ms(120), ms(130), ms(400)}) {
    const Decision a = set.decide("k", t, 1);
    const Decision b = alone.at(t);
    EXPECT_EQ(a.allowed, b.allowed) << t;
    EXPECT_EQ(a.delay, b.delay) << t;
  }
}

}  // namespace
}  // namespace sluice::local
