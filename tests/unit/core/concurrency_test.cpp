// Concurrency limits: at most `limit` leases in flight. The pure algorithm, and the
// thread-safe ConcurrencyLimiter whose leases give their permits back on every path.
#include "sluice/core/concurrency.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "sluice/core/concurrency_limiter.hpp"
#include "support/threads.hpp"

namespace sluice::core {
namespace {

TEST(Concurrency, AllowsUpToTheLimitInFlightAndHasNoRetryTime) {
  const Concurrency::Params p{2};
  auto s = Concurrency::start(p, 0);
  auto a = Concurrency::acquire(p, s, 1);
  ASSERT_TRUE(a.decision.allowed);
  EXPECT_EQ(a.decision.remaining, 1);
  auto b = Concurrency::acquire(p, a.next, 1);
  ASSERT_TRUE(b.decision.allowed);
  const auto c = Concurrency::acquire(p, b.next, 1);
  EXPECT_FALSE(c.decision.allowed);
  EXPECT_EQ(c.decision.retry_after, 0);  // a lease frees when a holder finishes: unknown
  EXPECT_TRUE(Concurrency::acquire(p, Concurrency::release(b.next, 1), 1).decision.allowed);
}

TEST(Concurrency, CostAboveTheLimitIsNeverAllowed) {
  const auto d = Concurrency::acquire(Concurrency::Params{2}, Concurrency::State{0}, 3);
  EXPECT_FALSE(d.decision.allowed);
  EXPECT_EQ(d.decision.retry_after, kNever);
}

TEST(Concurrency, ReleasingMoreThanIsHeldStopsAtZero) {
  EXPECT_EQ(Concurrency::release(Concurrency::State{1}, 5).in_flight, 0);
  EXPECT_TRUE(Concurrency::idle(Concurrency::Params{2}, Concurrency::State{0}, 0));
}

TEST(ConcurrencyLimiter, ALeaseGivesItsPermitsBackAtScopeExit) {
  ConcurrencyLimiter limiter(2);
  {
    auto lease = limiter.try_acquire(2);
    ASSERT_TRUE(lease);
    EXPECT_EQ(limiter.in_flight(), 2);
    Decision why;
    EXPECT_FALSE(limiter.try_acquire(1, &why));
    EXPECT_EQ(why.remaining, 0);
  }
  EXPECT_EQ(limiter.in_flight(), 0);
}

TEST(ConcurrencyLimiter, ALeaseGivesItsPermitsBackWhenAnExceptionUnwinds) {
  ConcurrencyLimiter limiter(1);
  EXPECT_THROW(
      {
        auto lease = limiter.try_acquire();
        ASSERT_TRUE(lease);
        throw std::runtime_error("handler failed");
      },
      std::runtime_error);
  EXPECT_EQ(limiter.in_flight(), 0);
  EXPECT_TRUE(limiter.try_acquire());
}

TEST(ConcurrencyLimiter, AMovedLeaseIsReleasedOnceByItsNewOwner) {
  ConcurrencyLimiter limiter(3);
  std::vector<ConcurrencyLimiter::Lease> held;
  {
    auto lease = limiter.try_acquire(2);
    ASSERT_TRUE(lease);
    held.push_back(std::move(*lease));
  }  // the moved-from lease is destroyed here and gives nothing back
  EXPECT_EQ(limiter.in_flight(), 2);
  held.clear();
  EXPECT_EQ(limiter.in_flight(), 0);
}

TEST(ConcurrencyLimiter, MoveAssignmentReleasesWhatTheTargetHeld) {
  ConcurrencyLimiter limiter(3);
  auto a = limiter.try_acquire(1);
  auto b = limiter.try_acquire(2);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(limiter.in_flight(), 3);
  *a = std::move(*b);  // a's 1 permit goes back; a now holds b's 2
  EXPECT_EQ(limiter.in_flight(), 2);
  b.reset();
  EXPECT_EQ(limiter.in_flight(), 2);
  a.reset();
  EXPECT_EQ(limiter.in_flight(), 0);
}

TEST(ConcurrencyLimiter, AnEarlyReleaseIsNotRepeatedByTheDestructor) {
  ConcurrencyLimiter limiter(2);
  auto other = limiter.try_acquire(1);
  {
    auto lease = limiter.try_acquire(1);
    ASSERT_TRUE(lease);
    lease->release();
    EXPECT_EQ(limiter.in_flight(), 1);
    lease->release();
    EXPECT_EQ(limiter.in_flight(), 1);
  }
  EXPECT_EQ(limiter.in_flight(), 1);  // only `other` is held
}

TEST(ConcurrencyLimiter, ThreadsRacingForLeasesNeverExceedTheLimit) {
  constexpr std::int64_t kLimit = 3;
  constexpr int kThreads = 4;
  constexpr int kAttempts = 100'000;
  ConcurrencyLimiter limiter(kLimit);
  std::atomic<std::int64_t> inside{0};
  std::atomic<std::int64_t> most{0};
  std::atomic<std::int64_t> granted{0};
  test::on_threads(kThreads, [&](int t) {
    for (int i = 0; i < kAttempts; ++i) {
      const std::int64_t cost = 1 + (i + t) % 2;
      auto lease = limiter.try_acquire(cost);
      if (!lease) continue;
      granted.fetch_add(1, std::memory_order_relaxed);
      const std::int64_t now_inside = inside.fetch_add(cost) + cost;
      std::int64_t seen = most.load();
      while (now_inside > seen && !most.compare_exchange_weak(seen, now_inside)) {
      }
      inside.fetch_sub(cost);
    }
  });
  EXPECT_LE(most.load(), kLimit);
  EXPECT_GT(granted.load(), 0);
  EXPECT_EQ(limiter.in_flight(), 0);
}

}  // namespace
}  // namespace sluice::core
