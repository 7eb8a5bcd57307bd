// The breaker in front of Redis: when it stops calling a failing Redis, when it probes, and
// how one good answer brings decisions back to Redis.
#include "sluice/backend/redis/breaker.hpp"

#include <gtest/gtest.h>

namespace sluice::backend::redis {
namespace {

constexpr core::Nanos kMs = core::kNanosPerMilli;

Breaker three_failures_then_200ms() { return Breaker(Breaker::Options{3, 200 * kMs}); }

TEST(Breaker, StaysClosedUntilThreeFailedCallsInARow) {
  Breaker b = three_failures_then_200ms();
  b.failure(0, false);
  b.failure(1 * kMs, false);
  EXPECT_EQ(b.state(), Breaker::State::kClosed);
  EXPECT_TRUE(b.allow(2 * kMs));
  b.failure(2 * kMs, false);
  EXPECT_EQ(b.state(), Breaker::State::kOpen);
  EXPECT_FALSE(b.allow(3 * kMs));
}

TEST(Breaker, ASuccessResetsTheCountOfFailures) {
  Breaker b = three_failures_then_200ms();
  b.failure(0, false);
  b.failure(0, false);
  b.success();
  b.failure(0, false);
  b.failure(0, false);
  EXPECT_EQ(b.state(), Breaker::State::kClosed);
}

TEST(Breaker, OpensAtOnceWhenTheConnectionIsDown) {
  Breaker b = three_failures_then_200ms();
  b.failure(10 * kMs, true);
  EXPECT_EQ(b.state(), Breaker::State::kOpen);
  EXPECT_EQ(b.opens(), 1u);
}

TEST(Breaker, AfterTheOpenIntervalExactlyOneCallProbes) {
  Breaker b = three_failures_then_200ms();
  b.failure(0, true);
  EXPECT_FALSE(b.allow(199 * kMs));
  EXPECT_TRUE(b.allow(200 * kMs));   // the probe
  EXPECT_FALSE(b.allow(201 * kMs));  // others keep following the failure policy
  EXPECT_EQ(b.state(), Breaker::State::kHalfOpen);
}

TEST(Breaker, AGoodProbeClosesIt) {
  Breaker b = three_failures_then_200ms();
  b.failure(0, true);
  ASSERT_TRUE(b.allow(200 * kMs));
  b.success();
  EXPECT_EQ(b.state(), Breaker::State::kClosed);
  EXPECT_TRUE(b.allow(201 * kMs));
  EXPECT_TRUE(b.allow(202 * kMs));
}

TEST(Breaker, AFailedProbeOpensItForAnotherInterval) {
  Breaker b = three_failures_then_200ms();
  b.failure(0, true);
  ASSERT_TRUE(b.allow(200 * kMs));
  b.failure(250 * kMs, false);  // one failure is enough in half-open
  EXPECT_EQ(b.state(), Breaker::State::kOpen);
  EXPECT_FALSE(b.allow(449 * kMs));
  EXPECT_TRUE(b.allow(450 * kMs));
  EXPECT_EQ(b.opens(), 1u);  // one outage, however many probes fail
}

}  // namespace
}  // namespace sluice::backend::redis
