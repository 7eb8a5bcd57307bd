// KeyedTable::peek and reset for every algorithm a rule's table can hold: a look charges
// nothing (twice the same answer, the next request decided as before), a key never seen
// answers its full quota, and a reset gives the next request a full quota.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "sluice/core/concurrency.hpp"
#include "sluice/core/fixed_window.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/core/leaky_bucket.hpp"
#include "sluice/core/sliding_window.hpp"
#include "sluice/core/smooth_bursty.hpp"
#include "sluice/core/smooth_warmup.hpp"
#include "sluice/core/token_bucket.hpp"
#include "sluice/core/uniform_queue.hpp"
#include "sluice/table/keyed_table.hpp"
#include "support/units.hpp"

namespace sluice::table {
namespace {

using core::kNanosPerMilli;
using core::kNanosPerSecond;
using core::Rate;

using test::units::kMiB;
constexpr core::Nanos kNow = 1000 * kNanosPerSecond;  // on a 10 s window's start

bool same(const core::Decision& a, const core::Decision& b) {
  return a.allowed == b.allowed && a.remaining == b.remaining && a.retry_after == b.retry_after &&
         a.reset_after == b.reset_after && a.limit == b.limit;
}

// `quota` requests pass at kNow on a new key, the next is refused. `limit`: what the peek of
// a new key reports as remaining and limit (-1: the algorithm has no count).
template <class A>
void check_peek_and_reset(const typename A::Params& params, int quota, std::int64_t limit) {
  KeyedTable<A> t(params, kMiB);
  const KeyHash k = hash_key("user:1");

  const auto fresh = t.peek(k, kNow);
  EXPECT_FALSE(fresh.seen);
  EXPECT_TRUE(fresh.decision.allowed);
  EXPECT_EQ(fresh.decision.retry_after, 0);
  if (limit >= 0) {
    EXPECT_EQ(fresh.decision.remaining, limit);
    EXPECT_EQ(fresh.decision.limit, limit);
  }
  EXPECT_EQ(t.stats().keys, 0u) << "a look at a key never seen stores nothing";

  for (int i = 0; i < quota; ++i) ASSERT_TRUE(t.decide(k, kNow, 1, 0).allowed) << i;

  const auto full = t.peek(k, kNow);
  EXPECT_TRUE(full.seen);
  EXPECT_FALSE(full.decision.allowed);
  EXPECT_GT(full.decision.retry_after, 0);
  if (limit >= 0) {
    EXPECT_EQ(full.decision.remaining, 0);
  }
  const auto again = t.peek(k, kNow);
  EXPECT_TRUE(same(full.decision, again.decision)) << "the first look charged the key";

  const core::Decision refused = t.decide(k, kNow, 1, 0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after, full.decision.retry_after);

  EXPECT_TRUE(t.reset(k));
  EXPECT_EQ(t.stats().keys, 0u);
  EXPECT_FALSE(t.peek(k, kNow).seen);
  EXPECT_FALSE(t.reset(k)) << "nothing left to forget";
  for (int i = 0; i < quota; ++i) {
    const core::Decision d = t.decide(k, kNow, 1, 0);
    EXPECT_TRUE(d.allowed) << "after the reset, request " << i;
    if (limit >= 0) {
      EXPECT_EQ(d.remaining, limit - 1 - i);
    }
  }
}

TEST(KeyedTablePeek, FixedWindowOf3Per10s) {
  check_peek_and_reset<core::FixedWindow>({3, 10 * kNanosPerSecond}, 3, 3);
}

TEST(KeyedTablePeek, SlidingWindowOf3Per10s) {
  check_peek_and_reset<core::SlidingWindow>({3, 10 * kNanosPerSecond}, 3, 3);
}

TEST(KeyedTablePeek, LeakyBucketOf1PerSecondBurst2PassesThreeOnANewKey) {
  // nginx: a new key's first request is free, then the burst of 2: limit 3.
  check_peek_and_reset<core::LeakyBucket>(
      core::LeakyBucket::make(Rate{1, kNanosPerSecond}, 2, core::LeakyBucket::kNoDelay), 3, 3);
}

TEST(KeyedTablePeek, TokenBucketOf1PerSecondBurst3) {
  check_peek_and_reset<core::TokenBucket>(core::TokenBucket::make(Rate{1, kNanosPerSecond}, 3), 3,
                                          3);
}

TEST(KeyedTablePeek, GcraOf1PerSecondBurst2) {
  check_peek_and_reset<core::Gcra>(core::Gcra::make(Rate{1, kNanosPerSecond}, 2), 3, 3);
}

TEST(KeyedTablePeek, SmoothBurstyOf1PerSecond) {
  check_peek_and_reset<core::SmoothBursty>(
      core::SmoothBursty::make(Rate{1, kNanosPerSecond}, kNanosPerSecond), 1, -1);
}

TEST(KeyedTablePeek, SmoothWarmupOf5PerSecond) {
  check_peek_and_reset<core::SmoothWarmup>(
      core::SmoothWarmup::make(Rate{5, kNanosPerSecond}, 3 * kNanosPerSecond, 3.0), 1, -1);
}

TEST(KeyedTablePeek, UniformQueueOf1PerSecondWithoutQueueing) {
  check_peek_and_reset<core::UniformQueue>(core::UniformQueue::make(Rate{1, kNanosPerSecond}, 0), 1,
                                           -1);
}

TEST(KeyedTablePeek, GcraPeekAfterTimePassesSeesTheRefill) {
  KeyedTable<core::Gcra> t(core::Gcra::make(Rate{1, kNanosPerSecond}, 2), kMiB);
  const KeyHash k = hash_key("k");
  for (int i = 0; i < 3; ++i) t.decide(k, kNow, 1, 0);
  // 1.5 s later one permit is back, the next in 0.5 s; the bucket is full 3 s after kNow.
  const auto p = t.peek(k, kNow + 1500 * kNanosPerMilli);
  EXPECT_TRUE(p.decision.allowed);
  EXPECT_EQ(p.decision.remaining, 1);
  EXPECT_EQ(p.decision.reset_after, 1500 * kNanosPerMilli);
}

TEST(KeyedTablePeek, ConcurrencyShowsThePermitsInFlight) {
  KeyedTable<core::Concurrency> t(core::Concurrency::Params{3}, kMiB);
  const KeyHash k = hash_key("k");
  EXPECT_EQ(t.peek(k, kNow).decision.remaining, 3);
  for (int i = 0; i < 2; ++i) t.decide(k, kNow, 1, 0);
  const auto p = t.peek(k, kNow);
  EXPECT_TRUE(p.seen);
  EXPECT_TRUE(p.decision.allowed);
  EXPECT_EQ(p.decision.remaining, 1);
  EXPECT_EQ(t.peek(k, kNow).decision.remaining, 1);
}

TEST(KeyedTablePeek, ResetForgetsOnlyThatKey) {
  KeyedTable<core::FixedWindow> t({1, 10 * kNanosPerSecond}, kMiB);
  t.decide("a", kNow, 1, 0);
  t.decide("b", kNow, 1, 0);
  EXPECT_TRUE(t.reset(hash_key("a")));
  EXPECT_TRUE(t.decide("a", kNow, 1, 0).allowed);
  EXPECT_FALSE(t.decide("b", kNow, 1, 0).allowed);
  EXPECT_EQ(t.stats().keys, 2u);
}

TEST(KeyedTablePeek, LooksWhileTwoThreadsDecideNeitherChargeNorLoseAPermit) {
  // 1000 per hour at one instant: exactly 1000 of 4000 attempts pass, however many looks and
  // looks at other keys run between them; the key keeps one slot.
  KeyedTable<core::FixedWindow> t({1000, 3600 * kNanosPerSecond}, kMiB);
  const KeyHash k = hash_key("hot");
  std::atomic<int> admitted{0};
  std::atomic<bool> done{false};
  std::thread looker([&] {
    while (!done.load()) {
      const auto p = t.peek(k, kNow);
      EXPECT_GE(p.decision.remaining, 0);
      t.peek(hash_key("cold"), kNow);
    }
  });
  std::vector<std::thread> deciders;
  for (int i = 0; i < 2; ++i) {
    deciders.emplace_back([&] {
      for (int n = 0; n < 2000; ++n) {
        if (t.decide(k, kNow, 1, 0).allowed) admitted.fetch_add(1);
      }
    });
  }
  for (auto& d : deciders) d.join();
  done.store(true);
  looker.join();
  EXPECT_EQ(admitted.load(), 1000);
  EXPECT_EQ(t.peek(k, kNow).decision.remaining, 0);
  EXPECT_EQ(t.stats().keys, 1u);
}

TEST(KeyedTablePeek, ResetsRacingDecisionsLeaveAtMostOneSlotForTheKey) {
  KeyedTable<core::Gcra> t(core::Gcra::make(Rate{1, kNanosPerSecond}, 2), kMiB);
  const KeyHash k = hash_key("hot");
  std::atomic<bool> done{false};
  std::thread resetter([&] {
    while (!done.load()) t.reset(k);
  });
  for (int n = 0; n < 2000; ++n) {
    t.decide(k, kNow, 1, 0);
    EXPECT_LE(t.stats().keys, 1u);
  }
  done.store(true);
  resetter.join();
  t.reset(k);
  EXPECT_EQ(t.stats().keys, 0u);
  EXPECT_EQ(t.decide(k, kNow, 1, 0).remaining, 2);  // a full quota after the last reset
}

}  // namespace
}  // namespace sluice::table
