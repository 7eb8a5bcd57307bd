// Keyed decisions at 1M and 10M keys (uniform and Zipf(1.0) popularity, 1 and 2 threads),
// beside the floor: an absl::flat_hash_map lookup plus one 64-bit CAS, and absl plus GCRA.
#include <absl/container/flat_hash_map.h>
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "sluice/clock/clocks.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/core/leaky_bucket.hpp"
#include "sluice/core/token_bucket.hpp"
#include "sluice/table/keyed_table.hpp"

namespace {

using sluice::core::Gcra;
using sluice::core::kNanosPerSecond;
using sluice::core::LeakyBucket;
using sluice::core::Nanos;
using sluice::core::Rate;
using sluice::core::TokenBucket;
using sluice::table::KeyedTable;

constexpr std::size_t kSamples = 1 << 22;  // access sequence length per thread

// Fixtures are built lazily by whichever benchmark thread comes first.
std::mutex fixture_mutex;

std::size_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// Keys "client-<n>"; built once per size and shared by every benchmark.
const std::vector<std::string>& keys(std::size_t n) {
  std::lock_guard<std::mutex> guard(fixture_mutex);
  static std::vector<std::unique_ptr<std::vector<std::string>>> cache;
  for (auto& k : cache) {
    if (k->size() == n) return *k;
  }
  auto k = std::make_unique<std::vector<std::string>>();
  k->reserve(n);
  for (std::size_t i = 0; i < n; ++i) k->push_back("client-" + std::to_string(i));
  cache.push_back(std::move(k));
  return *cache.back();
}

std::vector<std::uint32_t> sequence_of(std::size_t n, bool zipf, std::uint64_t seed);

// Indices into the key set: uniform, or Zipf(1.0) by inverse CDF with ranks shuffled over ids.
// With several threads, thread t only uses ids congruent to t (distinct keys per thread).
std::vector<std::uint32_t> sequence(std::size_t n, bool zipf, const benchmark::State& state) {
  auto out = sequence_of(n, zipf, 42 + static_cast<std::uint64_t>(state.thread_index()));
  const auto threads = static_cast<std::uint32_t>(state.threads());
  const auto t = static_cast<std::uint32_t>(state.thread_index());
  for (auto& x : out)
    x = std::min<std::uint32_t>(x - x % threads + t, static_cast<std::uint32_t>(n - 1));
  return out;
}

std::vector<std::uint32_t> sequence_of(std::size_t n, bool zipf, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> out(kSamples);
  if (!zipf) {
    std::uniform_int_distribution<std::uint32_t> d(0, static_cast<std::uint32_t>(n - 1));
    for (auto& x : out) x = d(rng);
    return out;
  }
  std::vector<double> cdf(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) cdf[i] = (sum += 1.0 / static_cast<double>(i + 1));
  std::vector<std::uint32_t> id(n);
  for (std::size_t i = 0; i < n; ++i) id[i] = static_cast<std::uint32_t>(i);
  std::shuffle(id.begin(), id.end(), rng);
  std::uniform_real_distribution<double> u(0, sum);
  for (auto& x : out) {
    const auto rank = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
    x = id[static_cast<std::size_t>(
        std::min<std::ptrdiff_t>(rank, static_cast<std::ptrdiff_t>(n - 1)))];
  }
  return out;
}

// Budget for n keys at 75% of the slots, so nearly all of them stay resident.
template <class A>
std::size_t budget_for(std::size_t n) {
  return n * KeyedTable<A>::slot_bytes() * 4 / 3;
}

template <class A>
struct TableFixture {
  std::unique_ptr<KeyedTable<A>> table;
  std::size_t rss_per_key_x100 = 0;
  double resident = 0;
};

template <class A>
typename A::Params params();
template <>
Gcra::Params params<Gcra>() {
  return Gcra::make(Rate{1'000'000, kNanosPerSecond}, 100);
}
template <>
TokenBucket::Params params<TokenBucket>() {
  return TokenBucket::make(Rate{1'000'000, kNanosPerSecond}, 100);
}
template <>
LeakyBucket::Params params<LeakyBucket>() {
  return LeakyBucket::make(Rate{1'000'000, kNanosPerSecond}, 100, LeakyBucket::kNoDelay);
}

// One table per (algorithm, size), filled with every key once; RSS growth measured around it.
template <class A>
TableFixture<A>& fixture(std::size_t n) {
  const auto& k = keys(n);
  std::lock_guard<std::mutex> guard(fixture_mutex);
  static std::vector<std::pair<std::size_t, std::unique_ptr<TableFixture<A>>>> cache;
  for (auto& [size, f] : cache) {
    if (size == n) return *f;
  }
  auto f = std::make_unique<TableFixture<A>>();
  const std::size_t before = rss_bytes();
  f->table = std::make_unique<KeyedTable<A>>(params<A>(), budget_for<A>(n));
  for (const auto& key : k) f->table->decide(key, 0, 1, 0);
  f->rss_per_key_x100 = (rss_bytes() - before) * 100 / n;
  f->resident = static_cast<double>(f->table->stats().keys) / static_cast<double>(n);
  cache.emplace_back(n, std::move(f));
  return *cache.back().second;
}

// Decisions through the table: args {keys, zipf}; each thread walks its own sequence.
// The requests' keys laid out in arrival order, copied into one buffer as a server reads them
// from its sockets: fetching the key bytes is sequential, so what is measured is the table.
struct Arrivals {
  std::string bytes;
  std::vector<std::string_view> keys;
  std::string_view operator[](std::size_t i) const { return keys[i]; }
  const std::string_view* data() const { return keys.data(); }
};

Arrivals arrivals(std::size_t n, bool zipf, const benchmark::State& state) {
  const auto& k = keys(n);
  const auto seq = sequence(n, zipf, state);
  Arrivals a;
  std::size_t total = 0;
  for (auto x : seq) total += k[x].size();
  a.bytes.reserve(total);
  for (auto x : seq) a.bytes += k[x];
  a.keys.reserve(seq.size());
  std::size_t off = 0;
  for (auto x : seq) {
    a.keys.emplace_back(a.bytes.data() + off, k[x].size());
    off += k[x].size();
  }
  return a;
}

template <class A, bool kReadClock>
void BM_Table(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool zipf = state.range(1) != 0;
  auto& f = fixture<A>(n);
  const auto in = arrivals(n, zipf, state);
  std::size_t i = 0;
  Nanos now = 1;
  for (auto _ : state) {
    const std::string_view key = in[i++ & (kSamples - 1)];
    if constexpr (kReadClock) now = sluice::clock::SteadyClock::read();
    benchmark::DoNotOptimize(f.table->decide(key, now, 1, 0));
    now += 1;
  }
  state.counters["rss_B_per_key"] = static_cast<double>(f.rss_per_key_x100) / 100.0;
  state.counters["resident"] = f.resident;
  state.counters["slot_B"] = static_cast<double>(KeyedTable<A>::slot_bytes());
}

// Batches of 32 requests through decide_many (prefetching ahead), as an event loop would.
template <class A>
void BM_TableBatched(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool zipf = state.range(1) != 0;
  auto& f = fixture<A>(n);
  const auto in = arrivals(n, zipf, state);
  constexpr std::size_t kBatch = 32;
  sluice::core::Decision out[kBatch];
  std::size_t i = 0;
  Nanos now = 1;
  for (auto _ : state) {
    f.table->decide_many(
        std::span<const std::string_view>(in.data() + (i & (kSamples - 1)), kBatch), now, 1, 0,
        out);
    benchmark::DoNotOptimize(out);
    i += kBatch;
    now += 1;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
  state.counters["ns_per_decision"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBatch),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One lookup at a time: the next key depends on the previous decision, so cache misses
// cannot overlap. The latency a lone request sees.
void BM_TableDependentLookups(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto& f = fixture<Gcra>(n);
  const auto& k = keys(n);
  std::uint64_t x = 12345;
  Nanos now = 1;
  for (auto _ : state) {
    const auto d = f.table->decide(k[x % n], now++, 1, 0);
    x = x * 6364136223846793005ull + 1442695040888963407ull +
        static_cast<std::uint64_t>(d.remaining);
  }
}

// The floor: absl::flat_hash_map<std::string, int64> find plus one CAS on the value, and find
// plus a GCRA update (the reference points), same keys, same sequence.
struct AbslFloor {
  absl::flat_hash_map<std::string, std::int64_t> map;
};
AbslFloor& absl_floor(std::size_t n) {
  const auto& k = keys(n);
  std::lock_guard<std::mutex> guard(fixture_mutex);
  static std::vector<std::pair<std::size_t, std::unique_ptr<AbslFloor>>> cache;
  for (auto& [size, f] : cache) {
    if (size == n) return *f;
  }
  auto f = std::make_unique<AbslFloor>();
  f->map.reserve(n);
  for (const auto& key : k) f->map.emplace(key, 0);
  cache.emplace_back(n, std::move(f));
  return *cache.back().second;
}

template <bool kGcra>
void BM_AbslFloor(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool zipf = state.range(1) != 0;
  auto& f = absl_floor(n);
  const auto in = arrivals(n, zipf, state);
  const auto p = Gcra::make(Rate{1'000'000, kNanosPerSecond}, 100);
  std::size_t i = 0;
  Nanos now = 1;
  for (auto _ : state) {
    const std::string_view key = in[i++ & (kSamples - 1)];
    auto it = f.map.find(absl::string_view(key.data(), key.size()));
    std::int64_t* word = &it->second;
    std::int64_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    std::int64_t next = seen + 1;
    if constexpr (kGcra) {
      const auto step = Gcra::decide(p, Gcra::State{seen}, now, 1, 0);
      next = step.next.tat;
      benchmark::DoNotOptimize(step.decision);
    }
    __atomic_compare_exchange_n(word, &seen, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    now += 1;
  }
}

void sizes(benchmark::internal::Benchmark* b) {
  for (long n : {1'000'000L, 10'000'000L}) {
    for (long zipf : {0L, 1L}) b->Args({n, zipf});
  }
}

BENCHMARK(BM_Table<Gcra, false>)->Apply(sizes)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_Table<TokenBucket, false>)->Apply(sizes)->Threads(1)->UseRealTime();
BENCHMARK(BM_Table<LeakyBucket, false>)->Apply(sizes)->Threads(1)->UseRealTime();
BENCHMARK(BM_Table<Gcra, true>)->Args({1'000'000, 0})->Args({10'000'000, 0})->UseRealTime();
BENCHMARK(BM_TableBatched<Gcra>)->Apply(sizes)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_TableBatched<TokenBucket>)->Apply(sizes)->Threads(1)->UseRealTime();
BENCHMARK(BM_TableDependentLookups)->Arg(1'000'000)->Arg(10'000'000);
BENCHMARK(BM_AbslFloor<false>)->Apply(sizes)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_AbslFloor<true>)->Apply(sizes)->Threads(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
