// on_change: proportional (core/rescale.hpp): after a change of burst or limit from 10 to 20,
// a key that had used 8 of 10 has used 16 of 20, in each algorithm's own terms.
#include "sluice/core/rescale.hpp"

#include <gtest/gtest.h>

#include "sluice/core/concurrency.hpp"
#include "sluice/core/uniform_queue.hpp"

namespace sluice::core {
namespace {

TEST(Rescale, AGcraTatAheadOfNowScalesWithTheTolerance) {
  const Gcra::Params from = Gcra::make(Rate{1, kNanosPerSecond}, 10);  // tolerance 11 s
  const Gcra::Params to = Gcra::make(Rate{1, kNanosPerSecond}, 21);    // tolerance 22 s
  const Nanos now = 100 * kNanosPerSecond;
  EXPECT_EQ(rescale(from, to, Gcra::State{now + 8 * kNanosPerSecond}, now).tat,
            now + 16 * kNanosPerSecond);
  EXPECT_EQ(rescale(from, to, Gcra::State{now - 5}, now).tat, now - 5) << "nothing used";
}

TEST(Rescale, TokenBucketTokensScaleWithTheBurstUpToTheNewBurst) {
  const TokenBucket::Params from = TokenBucket::make(Rate{1, kNanosPerSecond}, 10);
  const TokenBucket::Params to = TokenBucket::make(Rate{1, kNanosPerSecond}, 20);
  EXPECT_DOUBLE_EQ(rescale(from, to, TokenBucket::State{2.0, 7}, 7).tokens, 4.0);
  EXPECT_DOUBLE_EQ(rescale(to, from, TokenBucket::State{20.0, 7}, 7).tokens, 10.0);
}

TEST(Rescale, LeakyBucketExcessScalesWithTheBurstAndAFreshKeyStaysFresh) {
  const LeakyBucket::Params from = LeakyBucket::make(Rate{10, kNanosPerSecond}, 10, 0);
  const LeakyBucket::Params to = LeakyBucket::make(Rate{10, kNanosPerSecond}, 20, 0);
  EXPECT_EQ(rescale(from, to, LeakyBucket::State{8000, 5}, 0).excess, 16000);  // milli-requests
  EXPECT_EQ(rescale(from, to, LeakyBucket::State{LeakyBucket::kFresh, 0}, 0).excess,
            LeakyBucket::kFresh);
}

TEST(Rescale, WindowCountsScaleWithTheLimitInTheSameWindowLength) {
  const FixedWindow::Params f10{10, kNanosPerMinute}, f20{20, kNanosPerMinute};
  EXPECT_EQ(rescale(f10, f20, FixedWindow::State{3, 8}, 0).count, 16);
  EXPECT_EQ(rescale(f10, FixedWindow::Params{20, kNanosPerHour}, FixedWindow::State{3, 8}, 0).count,
            8)
      << "another window length: retune started a new window already";
  const SlidingWindow::Params s10{10, kNanosPerMinute}, s20{20, kNanosPerMinute};
  const SlidingWindow::State scaled = rescale(s10, s20, SlidingWindow::State{3, 5, 3}, 0);
  EXPECT_EQ(scaled.prev, 10);
  EXPECT_EQ(scaled.curr, 6);
}

TEST(Rescale, OnlyTheAlgorithmsWithAShareOfACapacityAreRescalable) {
  EXPECT_TRUE(Rescalable<Gcra>);
  EXPECT_TRUE(Rescalable<TokenBucket>);
  EXPECT_TRUE(Rescalable<LeakyBucket>);
  EXPECT_TRUE(Rescalable<FixedWindow>);
  EXPECT_TRUE(Rescalable<SlidingWindow>);
  EXPECT_FALSE(Rescalable<UniformQueue>);  // check-config refuses proportional there
  EXPECT_FALSE(Rescalable<Concurrency>);
}

}  // namespace
}  // namespace sluice::core
