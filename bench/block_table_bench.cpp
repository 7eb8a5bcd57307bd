// A blocked-key check (engine/block_table.hpp: BlockTable::blocked_until) on a full table of
// 16,384 blocks, looked up in a random order (the worst case: the table is larger than L2),
// beside the table as it was before it kept the keys' text: a striped std::unordered_map of
// hash to end, under the same locks. Short keys (inline in a std::string) and 40-byte keys.
//   build/release/bench/sluice_block_table_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "block_table.hpp"

namespace {

using sluice::core::Nanos;
using sluice::engine::detail::BlockTable;
using sluice::table::KeyHash;

constexpr Nanos kEnd = Nanos{1} << 50;

// The table before the listing: the hash and the end only.
class HashOnly {
 public:
  std::optional<Nanos> blocked_until(const KeyHash& h, Nanos now) {
    Stripe& s = stripes_[h.bucket % BlockTable::kStripes];
    std::lock_guard lock(s.mutex);
    const auto it = s.until.find(h);
    if (it == s.until.end() || it->second <= now) return std::nullopt;
    return it->second;
  }
  void block(const KeyHash& h, std::string_view, Nanos until, Nanos) {
    Stripe& s = stripes_[h.bucket % BlockTable::kStripes];
    std::lock_guard lock(s.mutex);
    s.until.emplace(h, until);
  }

 private:
  struct Hash {
    std::size_t operator()(const KeyHash& h) const { return h.fingerprint; }
  };
  struct Equal {
    bool operator()(const KeyHash& a, const KeyHash& b) const {
      return a.bucket == b.bucket && a.fingerprint == b.fingerprint;
    }
  };
  struct Stripe {
    std::mutex mutex;
    std::unordered_map<KeyHash, Nanos, Hash, Equal> until;
  };
  std::array<Stripe, BlockTable::kStripes> stripes_;
};

std::string key(int i, bool long_key) {
  std::string k = "10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256);
  return long_key ? k + "-api-key-0123456789abcdefghij-" + std::to_string(i) : k;
}

template <class Table>
void BM_BlockedCheck(benchmark::State& state) {
  const bool long_key = state.range(0) != 0;
  Table table;
  std::vector<KeyHash> hashes;
  for (int i = 0; i < static_cast<int>(BlockTable::kCapacity); ++i) {
    const std::string k = key(i, long_key);
    hashes.push_back(sluice::table::hash_key(k));
    table.block(hashes.back(), k, kEnd, 0);
  }
  std::size_t at = 0;
  for (auto _ : state) {
    at = (at + 7919) % hashes.size();  // a stride prime to the size: every key, no pattern
    benchmark::DoNotOptimize(table.blocked_until(hashes[at], 1));
  }
}

BENCHMARK_TEMPLATE(BM_BlockedCheck, BlockTable)->ArgName("long_key")->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_BlockedCheck, HashOnly)->ArgName("long_key")->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
