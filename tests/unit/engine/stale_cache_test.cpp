// The stale cache stays within its bytes (least recently used out), refuses an entry over
// max_entry, replaces a key's response, and drops one older than the age asked for.
#include "stale_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/units.hpp"

namespace sluice::engine::detail {
namespace {

using test::units::kSecond;

std::shared_ptr<const StaleEntry> entry(std::size_t body, core::Nanos at = 0) {
  auto e = std::make_shared<StaleEntry>();
  e->body.assign(body, 'x');
  e->stored = at;
  return e;
}

table::KeyHash key(std::uint64_t n) { return {n, n * 7}; }

TEST(StaleCache, StaysWithinMaxBytesDroppingTheLeastRecentlyUsed) {
  // Each entry costs 840 + 160 = 1000 bytes: 3 fit in 3000.
  StaleCache c({3000, 2000});
  for (std::uint64_t k = 1; k <= 3; ++k) ASSERT_TRUE(c.put(key(k), entry(840)));
  EXPECT_EQ(c.bytes(), 3000u);
  ASSERT_NE(c.get(key(1), 0, kSecond), nullptr);  // 1 is now the most recently used
  ASSERT_TRUE(c.put(key(4), entry(840)));         // 2 goes
  EXPECT_EQ(c.entries(), 3u);
  EXPECT_EQ(c.bytes(), 3000u);
  EXPECT_EQ(c.evictions(), 1u);
  EXPECT_EQ(c.get(key(2), 0, kSecond), nullptr);
  EXPECT_NE(c.get(key(1), 0, kSecond), nullptr);
  EXPECT_NE(c.get(key(4), 0, kSecond), nullptr);
}

TEST(StaleCache, AnEntryOverMaxEntryIsNotKept) {
  StaleCache c({10000, 1000});
  EXPECT_FALSE(c.put(key(1), entry(841)));  // 841 + 160 > 1000
  EXPECT_TRUE(c.put(key(1), entry(840)));
  EXPECT_EQ(c.bytes(), 1000u);
}

TEST(StaleCache, ANewResponseReplacesTheKeysOld) {
  StaleCache c({10000, 5000});
  c.put(key(1), entry(100));
  c.put(key(1), entry(300));
  EXPECT_EQ(c.entries(), 1u);
  EXPECT_EQ(c.bytes(), 460u);
  EXPECT_EQ(c.get(key(1), 0, kSecond)->body.size(), 300u);
}

TEST(StaleCache, AResponseOlderThanTheAgeAskedForIsDropped) {
  StaleCache c({10000, 5000});
  c.put(key(1), entry(10, 5 * kSecond));
  EXPECT_NE(c.get(key(1), 65 * kSecond, 60 * kSecond), nullptr);  // 60 s old: within
  EXPECT_EQ(c.get(key(1), 66 * kSecond, 60 * kSecond), nullptr);
  EXPECT_EQ(c.entries(), 0u);
  EXPECT_EQ(c.bytes(), 0u);
}

TEST(StaleCache, ASmallerBoundOnReloadDropsWhatNoLongerFits) {
  StaleCache c({10000, 5000});
  for (std::uint64_t k = 1; k <= 5; ++k) c.put(key(k), entry(840));
  c.resize({2000, 2000});
  EXPECT_EQ(c.entries(), 2u);
  EXPECT_NE(c.get(key(5), 0, kSecond), nullptr);  // the most recent stay
  EXPECT_NE(c.get(key(4), 0, kSecond), nullptr);
}

}  // namespace
}  // namespace sluice::engine::detail
