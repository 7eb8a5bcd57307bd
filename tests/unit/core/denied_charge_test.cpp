// count_denied per algorithm, by hand-checkable numbers: what charging a refused request does to
// a window, a GCRA and a token bucket, and the cap on the debt it can build.
#include "sluice/core/denied_charge.hpp"

#include <gtest/gtest.h>

#include "sluice/core/concurrency.hpp"
#include "sluice/core/leaky_bucket.hpp"
#include "support/units.hpp"

namespace sluice::core {
namespace {

using namespace test::units;

TEST(DeniedCharge, AGcraRefusalPushesTheNextAdmissionOnByOneIntervalUpToOneCapacity) {
  const auto p = Gcra::make(Rate{1, sec(1)}, 0);  // 1 a second, no burst: tolerance 1 s
  Gcra::State s = Gcra::decide(p, Gcra::start(p, 0), 0, 1, 0).next;  // admitted: TAT 1 s
  const auto refused = Gcra::decide(p, s, 0, 1, 0);
  ASSERT_FALSE(refused.decision.allowed);
  EXPECT_EQ(refused.decision.retry_after, sec(1));
  s = DeniedCharge<Gcra>::charge(p, s, 0, 1);  // TAT 2 s
  EXPECT_EQ(Gcra::decide(p, s, 0, 1, 0).decision.retry_after, sec(2));
  s = DeniedCharge<Gcra>::charge(p, s, 0, 1);  // capped at now + 2 x tolerance
  EXPECT_EQ(s.tat, sec(2));
  EXPECT_EQ(Gcra::decide(p, s, 0, 1, 0).decision.retry_after, sec(2));
  EXPECT_TRUE(Gcra::decide(p, s, sec(2), 1, 0).decision.allowed);  // paid off once it stops
}

TEST(DeniedCharge, ATokenBucketRefusalTakesTokensDownToMinusItsBurst) {
  const auto p = TokenBucket::make(Rate{10, sec(1)}, 10);
  TokenBucket::State s{0, 0};  // empty at t = 0
  s = DeniedCharge<TokenBucket>::charge(p, s, 0, 3);
  EXPECT_DOUBLE_EQ(s.tokens, -3);
  // 4 tokens (0.4 s at 10/s) until one request may pass, not 0.1 s.
  EXPECT_EQ(TokenBucket::decide(p, s, 0, 1, 0).decision.retry_after, ms(400));
  s = DeniedCharge<TokenBucket>::charge(p, s, 0, 100);
  EXPECT_DOUBLE_EQ(s.tokens, -10);
}

TEST(DeniedCharge, AFixedWindowFillsUpToItsLimitAndEmptiesAtTheWindowsEnd) {
  const FixedWindow::Params p{10, sec(1)};
  FixedWindow::State s{0, 8};
  // A refused cost of 5 (only 2 left) fills the window: 1 more is refused too.
  s = DeniedCharge<FixedWindow>::charge(p, s, ms(100), 5);
  EXPECT_EQ(s.count, 10);
  EXPECT_FALSE(FixedWindow::decide(p, s, ms(200), 1, 0).decision.allowed);
  EXPECT_TRUE(FixedWindow::decide(p, s, sec(1), 1, 0).decision.allowed);
}

TEST(DeniedCharge, ASlidingWindowCarriesRefusalsIntoTheNextWindowsWeightedShare) {
  const SlidingWindow::Params p{10, sec(1)};
  SlidingWindow::State s{0, 0, 5};
  s = DeniedCharge<SlidingWindow>::charge(p, s, ms(500), 5);
  EXPECT_EQ(s.curr, 10);
  // Half into the next window, the previous 10 weigh 5: 5 more pass, not 7 (5 would weigh 2.5).
  SlidingWindow::State next = s;
  int allowed = 0;
  for (int i = 0; i < 10; ++i) {
    const auto step = SlidingWindow::decide(p, next, ms(1500), 1, 0);
    if (!step.decision.allowed) break;
    next = step.next;
    ++allowed;
  }
  EXPECT_EQ(allowed, 5);
}

static_assert(CountsDenials<Gcra> && CountsDenials<TokenBucket> && CountsDenials<FixedWindow> &&
              CountsDenials<SlidingWindow>);
static_assert(!CountsDenials<LeakyBucket> && !CountsDenials<Concurrency>);

}  // namespace
}  // namespace sluice::core
