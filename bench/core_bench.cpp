// Nanoseconds per decision of the core: every algorithm on a local state (pass and deny paths
// apart), SharedLimiter<Gcra> from one and two threads, the clocks, and a bare CAS as the floor.
// scripts/run-bench.sh runs this beside the peers (x/time/rate, Guava) and tabulates medians.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <variant>

#include "sluice/clock/clocks.hpp"
#include "sluice/core/algorithm.hpp"
#include "sluice/core/shared_limiter.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace {

using sluice::core::Nanos;
namespace core = sluice::core;

// Virtual time: decisions see `now` advance by a fixed step, so no clock is read in the loop
// and every run sees the same sequence of states.
constexpr Nanos kStart = 1000 * core::kNanosPerSecond;
constexpr Nanos kStep = core::kNanosPerMicro;
// Decisions taken before timing to check that a benchmark stays on the path it names.
constexpr int kCheckSteps = 10'000;
// Two limiters on one 128-byte pair of cache lines would share a line through the adjacent-line
// prefetcher; "uncontended" must mean nothing shared.
constexpr std::size_t kLine = 128;

template <class A>
typename A::Params params_of(const char* spec) {
  auto parsed = sluice::spec::parse_limit_spec(spec);
  if (!parsed) {
    std::fprintf(stderr, "core_bench: bad spec '%s': %s\n", spec, parsed.error().c_str());
    std::abort();
  }
  return std::get<typename A::Params>(parsed->params);
}

// One decision at `now` of cost 1 in reject mode, committed as a caller commits it.
template <class A>
bool decide_and_commit(const typename A::Params& p, typename A::State& s, Nanos now) {
  const auto step = A::decide(p, s, now, 1, 0);
  if (step.decision.allowed || step.commit_on_denial) core::commit<A>(p, s, step);
  return step.decision.allowed;
}

enum class Path { kPass, kDeny };

// `drain` decisions at the start instant empty the limiter for the deny path.
template <class A>
void local_decision(benchmark::State& st, const char* spec, Path path, int drain) {
  const auto p = params_of<A>(spec);
  Nanos now = kStart;
  auto s = A::start(p, now);
  for (int i = 0; i < drain; ++i) decide_and_commit<A>(p, s, now);
  for (int i = 0; i < kCheckSteps; ++i) {
    now += kStep;
    if (decide_and_commit<A>(p, s, now) != (path == Path::kPass)) {
      st.SkipWithError("the limiter left the path this benchmark measures");
      return;
    }
  }
  for (auto _ : st) {
    now += kStep;
    const auto step = A::decide(p, s, now, 1, 0);
    // The whole decision, as a frontend reads it (remaining, retry-after, reset).
    benchmark::DoNotOptimize(step.decision);
    if (step.decision.allowed || step.commit_on_denial) core::commit<A>(p, s, step);
  }
}

// Pass: the rate refills faster than one decision per step takes. Deny: a rate of one per hour
// (or a limit of one per hour-long window), drained, so no refill arrives within a run.
template <class A>
void register_local(const std::string& name, const char* pass_spec, const char* deny_spec) {
  benchmark::RegisterBenchmark(("local/" + name + "/pass").c_str(), local_decision<A>, pass_spec,
                               Path::kPass, 0);
  benchmark::RegisterBenchmark(("local/" + name + "/deny").c_str(), local_decision<A>, deny_spec,
                               Path::kDeny, 1);
}

void register_locals() {
  register_local<core::TokenBucket>("token_bucket", "token-bucket:rate=2000000/s,burst=1000",
                                    "token-bucket:rate=1/h,burst=1");
  register_local<core::Gcra>("gcra", "gcra:rate=2000000/s,burst=1000", "gcra:rate=1/h,burst=0");
  register_local<core::LeakyBucket>("leaky_bucket",
                                    "leaky-bucket:rate=2000000/s,burst=1000,nodelay=1",
                                    "leaky-bucket:rate=4/h,burst=0");
  register_local<core::FixedWindow>("fixed_window", "fixed-window:limit=1000000000,window=1s",
                                    "fixed-window:limit=1,window=1h");
  register_local<core::SlidingWindow>("sliding_window", "sliding-window:limit=1000000000,window=1s",
                                      "sliding-window:limit=1,window=1h");
  register_local<core::SlidingLog>("sliding_log", "sliding-log:limit=1000000000,window=1ms",
                                   "sliding-log:limit=1,window=1h");
  register_local<core::SmoothBursty>("smooth_bursty", "smooth-bursty:rate=2000000/s",
                                     "smooth-bursty:rate=1/h");
  register_local<core::SmoothWarmup>("smooth_warmup", "smooth-warmup:rate=10000000/s,warmup=1s",
                                     "smooth-warmup:rate=1/h,warmup=1s");
  register_local<core::UniformQueue>("queue", "queue:rate=2000000/s",
                                     "queue:rate=1/h,max-wait=0ms");
  register_local<core::Concurrency>("concurrency", "concurrency:limit=1000000000000000",
                                    "concurrency:limit=1");
}

// ---- SharedLimiter<Gcra>: the lock-free limiter, one CAS per admitted decision.

using SharedGcra = core::SharedLimiter<core::Gcra>;

// Interval 1ns and a tolerance of 1000 s: every decision passes however far apart the threads'
// virtual clocks drift, so the CAS is on every iteration.
const core::Gcra::Params& shared_params() {
  static const auto p = params_of<core::Gcra>("gcra:rate=1000000000/s,burst=1000000000000");
  return p;
}

struct alignas(kLine) OwnLimiter {
  std::optional<SharedGcra> limiter;
};
OwnLimiter g_own_limiters[2];

// Uncontended: each thread decides on a limiter of its own. Contended: all on one.
void shared_decision(benchmark::State& st, bool contended) {
  static SharedGcra one(shared_params(), kStart);
  SharedGcra* limiter = &one;
  if (!contended) {
    auto& own = g_own_limiters[st.thread_index()].limiter;
    own.emplace(shared_params(), kStart);
    limiter = &*own;
  }
  Nanos now = kStart;
  for (auto _ : st) {
    now += kStep;
    benchmark::DoNotOptimize(limiter->decide(now));
  }
}

// SharedLimiter::allow: only the verdict and the next TAT inside the CAS loop, no Decision.
void shared_allow(benchmark::State& st) {
  auto& own = g_own_limiters[st.thread_index()].limiter;
  own.emplace(shared_params(), kStart);
  Nanos now = kStart;
  for (auto _ : st) {
    now += kStep;
    benchmark::DoNotOptimize(own->allow(now));
  }
}

// The deny path of the shared limiter: a load and a decision, no CAS.
void shared_deny(benchmark::State& st) {
  SharedGcra limiter(params_of<core::Gcra>("gcra:rate=1/h,burst=0"), kStart);
  limiter.decide(kStart);
  Nanos now = kStart;
  for (auto _ : st) {
    now += kStep;
    benchmark::DoNotOptimize(limiter.decide(now));
  }
}

// ---- The floor: what one 64-bit compare-and-swap loop costs, with no decision around it.

struct alignas(kLine) OwnWord {
  std::atomic<std::uint64_t> word{0};
};
OwnWord g_own_words[2];
OwnWord g_one_word;

void cas_floor(benchmark::State& st, bool contended) {
  auto& word = contended ? g_one_word.word : g_own_words[st.thread_index()].word;
  for (auto _ : st) {
    std::uint64_t seen = word.load(std::memory_order_acquire);
    while (!word.compare_exchange_weak(seen, seen + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
    }
  }
  benchmark::DoNotOptimize(word.load(std::memory_order_relaxed));
}

// ---- Clocks: what reading time costs at the edge, and a decision that includes the read.

void clock_steady(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(sluice::clock::SteadyClock::read());
}

void clock_coarse(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(sluice::clock::CoarseClock::read());
}

void clock_cached(benchmark::State& st) {
  const sluice::clock::SteadyClock source;
  const core::CachedClock cached(source);
  for (auto _ : st) benchmark::DoNotOptimize(cached.now());
}

// A local decision with `now` from steady_clock, as x/time/rate's Allow() and Guava's
// tryAcquire() read their clocks. Rates high enough that every decision passes.
template <class A>
void local_decision_steady(benchmark::State& st, const char* spec) {
  const auto p = params_of<A>(spec);
  auto s = A::start(p, sluice::clock::SteadyClock::read());
  for (auto _ : st) {
    const auto step = A::decide(p, s, sluice::clock::SteadyClock::read(), 1, 0);
    benchmark::DoNotOptimize(step.decision);
    if (step.decision.allowed || step.commit_on_denial) core::commit<A>(p, s, step);
  }
}

void shared_decision_steady(benchmark::State& st) {
  SharedGcra limiter(shared_params(), sluice::clock::SteadyClock::read());
  for (auto _ : st) benchmark::DoNotOptimize(limiter.decide(sluice::clock::SteadyClock::read()));
}

// Names are what scripts/run-bench.sh and bench/report.py match: keep them in step.
void register_all() {
  register_locals();
  benchmark::RegisterBenchmark("shared/gcra_uncontended", shared_decision, false)
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("shared/gcra_contended", shared_decision, true)
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("shared/gcra_allow_uncontended", shared_allow)
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("shared/gcra_deny", shared_deny);
  benchmark::RegisterBenchmark("floor/cas_uncontended", cas_floor, false)
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("floor/cas_contended", cas_floor, true)->Threads(2)->UseRealTime();
  benchmark::RegisterBenchmark("clock/steady_read", clock_steady);
  benchmark::RegisterBenchmark("clock/coarse_read", clock_coarse);
  benchmark::RegisterBenchmark("clock/cached_now", clock_cached);
  benchmark::RegisterBenchmark("with_steady_clock/token_bucket_pass",
                               local_decision_steady<core::TokenBucket>,
                               "token-bucket:rate=1000000000/s,burst=1000");
  benchmark::RegisterBenchmark("with_steady_clock/smooth_bursty_pass",
                               local_decision_steady<core::SmoothBursty>,
                               "smooth-bursty:rate=1000000000/s");
  benchmark::RegisterBenchmark("with_steady_clock/shared_gcra_pass", shared_decision_steady);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
