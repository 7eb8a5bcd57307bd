// sluice::KeyedLimiter: a limit per key in a fixed memory budget: keys do not share state, a
// key's state starts at its first request, and a flood of keys evicts instead of growing.
#include "sluice/keyed_limiter.hpp"

#include <gtest/gtest.h>

#include <string>

#include "api/api_time.hpp"
#include "support/units.hpp"

namespace sluice {
namespace {

using namespace std::chrono_literals;

using test::units::kMiB;

using test::at;

TEST(KeyedLimiter, EachKeyHasItsOwnBudget) {
  KeyedLimiter limiter("token-bucket:rate=1/s,burst=2", kMiB);
  EXPECT_TRUE(limiter.allow("alice", at(0s)));
  EXPECT_TRUE(limiter.allow("alice", at(0s)));
  EXPECT_FALSE(limiter.allow("alice", at(0s)));
  EXPECT_TRUE(limiter.allow("bob", at(0s)));
  EXPECT_EQ(limiter.decide("alice", 1, 0s, at(0s)).retry_after, 1s);
  EXPECT_TRUE(limiter.allow("alice", at(1s)));
}

TEST(KeyedLimiter, AKeysStateStartsAtItsFirstRequest) {
  // Unlike a Limiter built at t=0, a key first seen at t=10s has saved no Guava permits.
  KeyedLimiter limiter(Limit::smooth_bursty(Rate::per_second(1)), kMiB);
  EXPECT_EQ(limiter.reserve("k", 1, kForever, at(10s)), 0s);
  EXPECT_EQ(limiter.reserve("k", 1, kForever, at(10s)), 1s);
}

TEST(KeyedLimiter, ReservesPerKeyWithinMaxWait) {
  KeyedLimiter limiter("gcra:rate=10/s,burst=0", kMiB);
  EXPECT_EQ(limiter.reserve("k", 1, 150ms, at(0s)), 0ms);
  EXPECT_EQ(limiter.reserve("k", 1, 150ms, at(0s)), 100ms);
  EXPECT_EQ(limiter.reserve("k", 1, 150ms, at(0s)), std::nullopt);
  EXPECT_EQ(limiter.reserve("other", 1, 150ms, at(0s)), 0ms);
}

TEST(KeyedLimiter, AFloodOfKeysStaysInTheBudgetAndEvicts) {
  KeyedLimiter limiter("token-bucket:rate=10/s,burst=5", 64 << 10);
  const KeyedLimiter::Stats empty = limiter.stats();
  EXPECT_LE(empty.memory_bytes, std::size_t{64 << 10});
  EXPECT_GT(empty.capacity, 1000u);
  for (std::size_t i = 0; i < 10 * empty.capacity; ++i) {
    limiter.allow("client-" + std::to_string(i), at(0s));
  }
  const KeyedLimiter::Stats full = limiter.stats();
  EXPECT_LE(full.keys, full.capacity);
  EXPECT_GT(full.keys, full.capacity / 2);
  EXPECT_GT(full.evictions, 8 * empty.capacity);
  EXPECT_EQ(full.memory_bytes, empty.memory_bytes);
}

TEST(KeyedLimiter, RefusesWhatCannotLiveInAFixedBudget) {
  try {
    KeyedLimiter("sliding-log:limit=5,window=1s", kMiB);
    FAIL() << "no error";
  } catch (const LimitError& e) {
    EXPECT_NE(std::string(e.what()).find("use sliding-window"), std::string::npos) << e.what();
  }
  EXPECT_THROW(KeyedLimiter("token-bucket:rate=1/s,burst=1", 64), LimitError);
  EXPECT_THROW(KeyedLimiter("concurrency:limit=2", kMiB), LimitError);
  EXPECT_THROW(KeyedLimiter("token-bucket:rate=1/s", kMiB), LimitError);
}

TEST(KeyedLimiter, ACostBelowOneIsACallerBug) {
  KeyedLimiter limiter("token-bucket:rate=1/s,burst=2", kMiB);
  EXPECT_THROW(limiter.try_acquire("k", 0), std::invalid_argument);
}

}  // namespace
}  // namespace sluice
