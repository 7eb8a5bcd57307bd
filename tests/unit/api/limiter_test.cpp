// sluice::Limiter: the calls that replace Guava's RateLimiter and x/time/rate's Limiter, with
// injected times and numbers a person can check, and one limiter shared by racing threads.
#include "sluice/limiter.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "api/api_time.hpp"
#include "support/threads.hpp"

namespace sluice {
namespace {

using namespace std::chrono_literals;

using test::at;

TEST(Limiter, TokenBucketAllowsItsBurstThenOnePerInterval) {
  Limiter limiter("token-bucket:rate=10/s,burst=20", at(0s));
  int allowed = 0;
  for (int i = 0; i < 25; ++i) allowed += limiter.allow(at(0s)) ? 1 : 0;
  EXPECT_EQ(allowed, 20);
  EXPECT_FALSE(limiter.allow(at(99ms)));
  EXPECT_TRUE(limiter.allow(at(100ms)));
}

TEST(Limiter, ADenialTellsTheWaitTheRemainderAndTheCapacity) {
  Limiter limiter(Limit::token_bucket(Rate::per_second(10), 2), at(0s));
  const Decision first = limiter.decide(1, 0s, at(0s));
  EXPECT_TRUE(first.allowed);
  EXPECT_EQ(first.remaining, 1);
  EXPECT_EQ(first.limit, 2);
  EXPECT_TRUE(limiter.try_acquire(1, at(0s)));
  const Decision denied = limiter.decide(1, 0s, at(0s));
  EXPECT_FALSE(denied);
  EXPECT_EQ(denied.retry_after, 100ms);
  EXPECT_EQ(denied.remaining, 0);
  EXPECT_EQ(denied.wait, 0s);
}

TEST(Limiter, ReservationsQueueUpAsXTimeRateReserveDoes) {
  // rate.NewLimiter(10, 1): Reserve() at t=0 three times -> delays 0, 100ms, 200ms.
  Limiter limiter("token-bucket:rate=10/s,burst=1", at(0s));
  EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), 0ms);
  EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), 100ms);
  EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), 200ms);
  // More than the burst can never be reserved (Reservation.OK() is false).
  EXPECT_EQ(limiter.reserve(2, kForever, at(0s)), std::nullopt);
}

TEST(Limiter, AReservationBeyondMaxWaitIsRefusedAndTakesNothing) {
  Limiter limiter("token-bucket:rate=10/s,burst=1", at(0s));
  ASSERT_TRUE(limiter.allow(at(0s)));
  EXPECT_EQ(limiter.reserve(1, 50ms, at(0s)), std::nullopt);
  EXPECT_EQ(limiter.reserve(1, 100ms, at(0s)), 100ms);
}

TEST(Limiter, SmoothBurstyPaysLaterAsGuavaDoes) {
  // RateLimiter.create(2): acquire() returns 0.0, then 0.5; tryAcquire() meanwhile is false.
  Limiter limiter(Limit::smooth_bursty(Rate::per_second(2)), at(0s));
  EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), 0ms);
  EXPECT_FALSE(limiter.try_acquire(1, at(0s)));
  EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), 500ms);
  EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), 1000ms);
  // The next permit is 1.5 s away: tryAcquire(1, 1499ms) is false, tryAcquire(1, 1500ms) true.
  EXPECT_EQ(limiter.reserve(1, 1499ms, at(0s)), std::nullopt);
  EXPECT_EQ(limiter.reserve(1, 1500ms, at(0s)), 1500ms);
}

TEST(Limiter, StateStartsAtConstructionSoIdleTimeSavesPermits) {
  // Guava: a limiter idle since its creation has saved up to max-burst of permits.
  Limiter old(Limit::smooth_bursty(Rate::per_second(1)), at(0s));
  Limiter fresh(Limit::smooth_bursty(Rate::per_second(1)), at(10s));
  std::vector<Duration> old_waits, fresh_waits;
  for (int i = 0; i < 3; ++i) {
    old_waits.push_back(*old.reserve(1, kForever, at(10s)));
    fresh_waits.push_back(*fresh.reserve(1, kForever, at(10s)));
  }
  EXPECT_EQ(old_waits, (std::vector<Duration>{0s, 0s, 1s}));
  EXPECT_EQ(fresh_waits, (std::vector<Duration>{0s, 1s, 2s}));
}

TEST(Limiter, GcraAnswersAsRedisCellDoes) {
  // CL.THROTTLE key 15 30 60 -> limit 16, remaining 15, then 14.
  Limiter limiter("gcra:rate=30/60s,burst=15", at(0s));
  const Decision d = limiter.decide(1, 0s, at(0s));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.limit, 16);
  EXPECT_EQ(d.remaining, 15);
  EXPECT_EQ(limiter.decide(1, 0s, at(0s)).remaining, 14);
}

TEST(Limiter, ATimeEarlierThanOneAlreadyDecidedIsNoTimeElapsed) {
  // A thread can read the clock, then wait for the CPU while another decides at a later time.
  // gcra 1000/s, burst 1 (lock-free): admitted at 20 ms, TAT 21 ms. A call stamped 0 ms is
  // decided as at 20 ms, where one more fits; then the limit of 2 holds.
  Limiter gcra("gcra:rate=1000/s,burst=1", at(0s));
  EXPECT_TRUE(gcra.decide(1, 0s, at(20ms)).allowed);
  EXPECT_TRUE(gcra.decide(1, 0s, at(0ms)).allowed);
  EXPECT_FALSE(gcra.decide(1, 0s, at(0ms)).allowed);
  // smooth-bursty 1000/s (under a mutex): idle 0..20 ms stored 20 permits, one is spent at
  // 20 ms. At "0 ms" Guava would find the next free ticket 20 ms away, more than the 5 ms
  // allowed; as at 20 ms, a stored permit serves it at once.
  Limiter bursty("smooth-bursty:rate=1000/s", at(0s));
  EXPECT_TRUE(bursty.decide(1, 0s, at(20ms)).allowed);
  const Decision d = bursty.decide(1, 5ms, at(0ms));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.wait, 0ms);
}

TEST(Limiter, WindowsAdmitNowOrNeverWhateverTheWait) {
  Limiter limiter(Limit::fixed_window(3, 1s), at(0s));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), 0s);
  EXPECT_EQ(limiter.reserve(1, kForever, at(0s)), std::nullopt);
  EXPECT_EQ(limiter.decide(1, 0s, at(0s)).retry_after, 1s);
  EXPECT_TRUE(limiter.allow(at(1s)));
}

TEST(Limiter, ACostAboveTheCapacityCanNeverBeAdmitted) {
  Limiter limiter("token-bucket:rate=10/s,burst=2", at(0s));
  EXPECT_EQ(limiter.decide(3, 0s, at(0s)).retry_after, kNever);
  EXPECT_THROW(limiter.acquire(3), LimitError);
}

TEST(Limiter, ACostBelowOneIsACallerBug) {
  Limiter limiter("token-bucket:rate=10/s,burst=2", at(0s));
  EXPECT_THROW(limiter.try_acquire(0, at(0s)), std::invalid_argument);
  EXPECT_THROW(limiter.reserve(-1), std::invalid_argument);
}

TEST(Limiter, ConcurrencyIsRefusedForItNeedsARelease) {
  EXPECT_THROW(Limiter("concurrency:limit=3"), LimitError);
}

TEST(Limiter, WithoutNowItReadsTheSteadyClock) {
  Limiter limiter("token-bucket:rate=1/h,burst=2");
  EXPECT_TRUE(limiter.allow());
  EXPECT_TRUE(limiter.allow());
  EXPECT_FALSE(limiter.allow());
}

TEST(Limiter, AcquireSleepsTheWaitAndReturnsIt) {
  Limiter limiter("token-bucket:rate=20/s,burst=1");
  EXPECT_EQ(limiter.acquire(), 0s);
  const auto start = Clock::now();
  const Duration slept = limiter.acquire();
  EXPECT_GT(slept, 0ms);  // 50 ms less the time between the two calls
  EXPECT_LE(slept, 50ms);
  EXPECT_GE(Clock::now() - start, slept);
}

TEST(Limiter, MovingKeepsTheState) {
  Limiter a("token-bucket:rate=1/h,burst=1", at(0s));
  ASSERT_TRUE(a.allow(at(0s)));
  Limiter b = std::move(a);
  EXPECT_FALSE(b.allow(at(0s)));
  EXPECT_EQ(b.limit().spec(), "token-bucket:rate=1/h,burst=1");
}

// Threads deciding at one instant admit exactly the capacity: no lost update, no double
// grant, for the locked path (token bucket) and the lock-free one (GCRA) alike.
void race(Limiter& limiter, std::int64_t expected) {
  constexpr int kTries = 5000;
  std::atomic<std::int64_t> admitted{0};
  test::on_threads(4, [&](int) {
    for (int i = 0; i < kTries; ++i) {
      if (limiter.allow(at(1s))) admitted.fetch_add(1, std::memory_order_relaxed);
    }
  });
  EXPECT_EQ(admitted.load(), expected) << limiter.limit().spec();
}

TEST(Limiter, RacingThreadsAdmitExactlyTheCapacity) {
  Limiter bucket("token-bucket:rate=1/h,burst=1000", at(1s));
  race(bucket, 1000);
  Limiter gcra("gcra:rate=1/h,burst=999", at(1s));
  race(gcra, 1000);
}

}  // namespace
}  // namespace sluice
