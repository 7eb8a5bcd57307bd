// KeyedTable: per-key limiting in a fixed budget, eviction under a key flood, live retune,
// and no over-admission when threads race on one key.
#include "sluice/table/keyed_table.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "sluice/core/fixed_window.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/core/leaky_bucket.hpp"
#include "sluice/core/token_bucket.hpp"
#include "support/units.hpp"

namespace sluice::table {
namespace {

using core::Gcra;
using core::kNanosPerMilli;
using core::kNanosPerSecond;
using core::Rate;
using core::TokenBucket;

using test::units::kMiB;

TEST(KeyedTable, EachKeyHasItsOwnBucket) {
  // 10/s, burst 3: three at once per key, and key b is untouched by a's burst.
  KeyedTable<TokenBucket> t(TokenBucket::make(Rate{10, kNanosPerSecond}, 3), kMiB);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(t.decide("a", 0, 1, 0).allowed);
  EXPECT_FALSE(t.decide("a", 0, 1, 0).allowed);
  EXPECT_TRUE(t.decide("b", 0, 1, 0).allowed);
  // 100 ms later a has one token again.
  EXPECT_TRUE(t.decide("a", 100 * kNanosPerMilli, 1, 0).allowed);
  EXPECT_EQ(t.stats().keys, 2u);
}

TEST(KeyedTable, SlotsAre16BytesForOneWordStatesAnd24ForTwo) {
  EXPECT_EQ(KeyedTable<Gcra>::slot_bytes(), 16u);
  EXPECT_EQ(KeyedTable<TokenBucket>::slot_bytes(), 24u);
  EXPECT_EQ(KeyedTable<core::LeakyBucket>::slot_bytes(), 24u);
}

TEST(KeyedTable, CapacityComesFromTheBudgetAndIsNeverExceeded) {
  KeyedTable<Gcra> t(Gcra::make(Rate{1, kNanosPerSecond}, 0), 16 * kMiB);
  const auto st = t.stats();
  EXPECT_LE(st.memory_bytes, 16 * kMiB);
  EXPECT_EQ(st.capacity, 16 * kMiB / 16);  // 16-byte slots: 1,048,576 keys in 16 MiB
  // Flood: 3x the capacity in distinct keys. Keys never exceed capacity; the rest evict.
  for (std::size_t i = 0; i < 3 * st.capacity; ++i) {
    t.decide("flood-" + std::to_string(i), static_cast<core::Nanos>(i), 1, 0);
  }
  const auto after = t.stats();
  EXPECT_LE(after.keys, after.capacity);
  EXPECT_GT(after.keys, after.capacity * 9 / 10);
  EXPECT_GE(after.evictions + after.idle_drops, 2 * st.capacity - st.capacity / 10);
}

TEST(KeyedTable, ALegitimateKeyStaysLimitedThroughAKeyFlood) {
  // gcra 1/s with burst 0: the real client may pass once per second. A flood of one-shot keys
  // streams through a small table; the client sends every 10 ms and is referenced constantly,
  // so CLOCK keeps it: it must get exactly one pass per second of the 5 s run.
  KeyedTable<Gcra> t(Gcra::make(Rate{1, kNanosPerSecond}, 0), 64 * 1024);
  int passed = 0;
  std::size_t flood = 0;
  for (core::Nanos now = 0; now < 5 * kNanosPerSecond; now += 10 * kNanosPerMilli) {
    for (int i = 0; i < 200; ++i) t.decide("bot-" + std::to_string(flood++), now, 1, 0);
    if (t.decide("client", now, 1, 0).allowed) ++passed;
  }
  EXPECT_EQ(passed, 5);
  EXPECT_GT(t.stats().evictions + t.stats().idle_drops, 90'000u);  // 100,000 bots, 4,096 slots
}

TEST(KeyedTable, IdleKeysAreDroppedBeforeLiveOnes) {
  // One bucket (8 slots) of a 1/s limit. Fill it at t=0, then at t=10s all are idle (full
  // again): new keys take their places as idle drops, not evictions.
  KeyedTable<Gcra> t(Gcra::make(Rate{1, kNanosPerSecond}, 0), sizeof(KeyedTable<Gcra>::Bucket));
  for (int i = 0; i < 8; ++i) t.decide("k" + std::to_string(i), 0, 1, 0);
  for (int i = 8; i < 16; ++i) t.decide("k" + std::to_string(i), 10 * kNanosPerSecond, 1, 0);
  EXPECT_EQ(t.stats().idle_drops, 8u);
  EXPECT_EQ(t.stats().evictions, 0u);
}

TEST(KeyedTable, RetuneKeepsEachKeysStateAndAppliesNewRateNext) {
  // 1/s burst 1 (x/time/rate): drain key a at t=0. Retune to 10/s at t=0: a still has no
  // token at t=0 (state kept), and has one 100 ms later (new rate applies).
  KeyedTable<TokenBucket> t(TokenBucket::make(Rate{1, kNanosPerSecond}, 1), kMiB);
  EXPECT_TRUE(t.decide("a", 0, 1, 0).allowed);
  t.retune(TokenBucket::make(Rate{10, kNanosPerSecond}, 1), 0);
  EXPECT_FALSE(t.decide("a", 0, 1, 0).allowed);
  EXPECT_TRUE(t.decide("a", 100 * kNanosPerMilli, 1, 0).allowed);
  EXPECT_TRUE(t.decide("b", 0, 1, 0).allowed);  // a new key starts full under the new burst
}

TEST(KeyedTable, TwoThreadsOnOneKeyNeverAdmitMoreThanBurstPlusRateTimesT) {
  // gcra 1000/s, burst 9 (limit 10). Time runs 0..100 ms in 1 us steps shared by both
  // threads: at most 10 + 1000 * 0.1 = 110 admissions in total.
  KeyedTable<Gcra> t(Gcra::make(Rate{1000, kNanosPerSecond}, 9), kMiB);
  std::atomic<core::Nanos> clock{0};
  std::atomic<int> admitted{0};
  auto worker = [&] {
    for (int i = 0; i < 100'000; ++i) {
      const core::Nanos now = clock.fetch_add(1000);
      if (now > 100 * kNanosPerMilli) break;
      if (t.decide("hot", now, 1, 0).allowed) admitted.fetch_add(1);
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  EXPECT_LE(admitted.load(), 111);  // 110, plus the request at exactly t = 100 ms
  EXPECT_GE(admitted.load(), 100);
}

TEST(KeyedTable, ConcurrentInsertsOfTheSameKeyMakeOneEntry) {
  KeyedTable<Gcra> t(Gcra::make(Rate{1, kNanosPerSecond}, 0), kMiB);
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int n = 0; n < 4; ++n) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (t.decide("key-" + std::to_string(i), 0, 1, 0).allowed) admitted.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.stats().keys, 2000u);
  EXPECT_EQ(admitted.load(), 2000);  // burst 0: exactly one pass per key at t=0
}

// Each event loop decides with the time it read at the start of its pass, so a loop can
// bring a time a few milliseconds older than one another loop has already decided the key at.
// That time counts as no time elapsed (nginx's rule), for every algorithm.
TEST(KeyedTable, AnEarlierTimeThanOneAlreadyDecidedIsNoTimeElapsedForGcra) {
  // gcra 1000/s (T = 1 ms), burst 1: tolerance 2 ms. At t = 20 ms a loop admits one request:
  // TAT = 21 ms. A loop whose pass began at t = 0 brings now = 0: TAT - now = 21 ms is beyond
  // the tolerance, but the key was last decided at 20 ms, where a second request fits.
  KeyedTable<Gcra> t(Gcra::make(Rate{1000, kNanosPerSecond}, 1), kMiB);
  EXPECT_TRUE(t.decide("k", 20 * kNanosPerMilli, 1, 0).allowed);
  EXPECT_TRUE(t.decide("k", 0, 1, 0).allowed);   // decided as at 20 ms: TAT 22 ms
  EXPECT_FALSE(t.decide("k", 0, 1, 0).allowed);  // the limit of 2 at 20 ms holds
}

TEST(KeyedTable, AnEarlierTimeNeitherRefillsATokenBucketTwiceNorReopensAWindow) {
  // token bucket 1000/s, burst 2: drained at 10 ms. A request at 0 must not move `last` back
  // to 0 (x/time/rate's advance would then credit 0..10 ms a second time at 11 ms).
  KeyedTable<TokenBucket> tb(TokenBucket::make(Rate{1000, kNanosPerSecond}, 2), kMiB);
  EXPECT_TRUE(tb.decide("k", 10 * kNanosPerMilli, 2, 0).allowed);
  EXPECT_FALSE(tb.decide("k", 0, 1, 0).allowed);
  EXPECT_TRUE(tb.decide("k", 11 * kNanosPerMilli, 1, 0).allowed);   // 1 ms: one token
  EXPECT_FALSE(tb.decide("k", 11 * kNanosPerMilli, 1, 0).allowed);  // not the 11 of 0..11
  // fixed window of 2 per 10 ms: the window [10, 20) is full; a request stamped 5 ms (the
  // window before) must not find an empty count.
  KeyedTable<core::FixedWindow> fw(core::FixedWindow::Params{2, 10 * kNanosPerMilli}, kMiB);
  EXPECT_TRUE(fw.decide("k", 12 * kNanosPerMilli, 2, 0).allowed);
  EXPECT_FALSE(fw.decide("k", 5 * kNanosPerMilli, 1, 0).allowed);
  EXPECT_FALSE(fw.decide("k", 13 * kNanosPerMilli, 1, 0).allowed);
}

TEST(KeyedTable, BudgetBelowOneBucketIsRefused) {
  EXPECT_THROW(KeyedTable<Gcra>(Gcra::make(Rate{1, kNanosPerSecond}, 0), 64),
               std::invalid_argument);
}

}  // namespace
}  // namespace sluice::table
