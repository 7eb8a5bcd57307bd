// A key flood against a bounded table: 10 million distinct keys through a 16 MiB table. Memory
// must stay within the budget plus a small constant, and a real client that keeps sending
// must stay limited exactly as if no flood were happening.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "sluice/core/gcra.hpp"
#include "sluice/table/keyed_table.hpp"

namespace sluice::table {
namespace {

using core::Gcra;
using core::kNanosPerMilli;
using core::kNanosPerSecond;

// Resident set size of this process, from /proc/self/statm.
std::size_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
  std::fclose(f);
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

TEST(KeyFlood, TenMillionKeysThrough16MiBStayWithinBudgetAndTheClientStaysLimited) {
#if defined(__SANITIZE_THREAD__)
  // One thread: nothing for ThreadSanitizer to see, and its shadow memory is not the table's.
  GTEST_SKIP() << "a memory bound of one thread, not run under ThreadSanitizer";
#endif
  constexpr std::size_t kBudget = 16u << 20;
  constexpr std::size_t kFloodKeys = 10'000'000;
  const std::size_t before = rss_bytes();
  KeyedTable<Gcra> t(Gcra::make(core::Rate{10, kNanosPerSecond}, 4), kBudget);

  // The client: gcra 10/s, burst 4 (limit 5), sending every 20 ms for 20 s of virtual time.
  // Its k-th pass needs 100 ms * k - 500 ms <= now, so by its last request (t = 19.98 s) it
  // has passed floor((19980 + 500) / 100) = 204 times, flood or no flood.
  int client_passed = 0;
  int client_sent = 0;
  char key[32];
  const std::size_t per_tick = kFloodKeys / 1000;  // 1000 ticks of 20 ms
  std::size_t flooded = 0;
  for (int tick = 0; tick < 1000; ++tick) {
    const core::Nanos now = tick * 20 * kNanosPerMilli;
    for (std::size_t i = 0; i < per_tick; ++i, ++flooded) {
      const int n = std::snprintf(key, sizeof key, "bot-%zu", flooded);
      t.decide(std::string_view(key, static_cast<std::size_t>(n)), now, 1, 0);
    }
    ++client_sent;
    if (t.decide("client", now, 1, 0).allowed) ++client_passed;
  }
  const std::size_t growth = rss_bytes() - before;
  const auto st = t.stats();

  EXPECT_EQ(flooded, kFloodKeys);
  EXPECT_LE(st.memory_bytes, kBudget);
  EXPECT_LE(growth, kBudget + (4u << 20)) << "RSS grew by " << growth << " bytes";
  EXPECT_EQ(st.keys, st.capacity) << "a flood fills every slot";
  EXPECT_GE(st.evictions + st.idle_drops, kFloodKeys - st.capacity);
  EXPECT_EQ(client_sent, 1000);
  EXPECT_EQ(client_passed, 204);
}

}  // namespace
}  // namespace sluice::table
