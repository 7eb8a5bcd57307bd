// Each adaptive limit, with its reference's defaults, in front of a simulated collapsing
// upstream (the model of tests/support/collapsing_upstream: C = 16 workers, S = 10 ms +/- 2 ms,
// an unbounded FIFO queue) under open-loop load at 3x its capacity, in virtual time: the
// pieces plug into the loop the gateway will run (admit while in_flight < limit, update on each
// end, advance at next_event) and keep goodput where a static limit at C would.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <queue>
#include <random>
#include <vector>

#include "sluice/adaptive/aimd.hpp"
#include "sluice/adaptive/envoy_gradient.hpp"
#include "sluice/adaptive/gradient2.hpp"
#include "sluice/adaptive/vegas.hpp"
#include "sluice/adaptive/windowed.hpp"

namespace sluice::adaptive {
namespace {

constexpr Nanos kMs = core::kNanosPerMilli;

struct Result {
  double goodput = 0;      // answered within the deadline, per second, over the last 10 s
  double refused = 0;      // per second, over the last 10 s
  std::int64_t limit = 0;  // at the end
  std::int64_t max_in_flight = 0;
  std::int64_t lowest_limit = INT64_MAX;  // over the last 10 s
};

// The gateway's side of one request: admitted at `start` with `in_flight` then; the upstream
// answers at `end`, or the gateway gives up at start + deadline (a dropped sample, as an
// upstream timeout is) while the upstream, unaware, still serves it.
struct Flight {
  Nanos start;
  std::int64_t in_flight;
  bool open = true;
};

template <AdaptiveLimit L>
Result run(const typename L::Params& p, double rate, Nanos seconds, int workers = 16,
           Nanos service = 10 * kMs, Nanos jitter = 2 * kMs, Nanos deadline = 200 * kMs) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<Nanos> jittered(service - jitter, service + jitter);
  auto state = L::start(p, 0, 1);
  std::vector<Flight> flights;
  std::deque<std::size_t> queue;               // at the upstream, waiting for a worker
  using Done = std::pair<Nanos, std::size_t>;  // (end, flight)
  std::priority_queue<Done, std::vector<Done>, std::greater<>> busy;  // in service
  std::deque<std::size_t> timeouts;                                   // open flights in start order
  std::int64_t in_flight = 0;
  Result r;
  const Nanos measure_from = seconds - 10 * core::kNanosPerSecond;
  const auto interval = static_cast<Nanos>(1e9 / rate);

  auto finish = [&](std::size_t f, Nanos now, Outcome outcome) {
    Flight& fl = flights[f];
    fl.open = false;
    --in_flight;
    if (outcome == Outcome::kSuccess && fl.start >= measure_from) r.goodput += 0.1;
    L::update(p, state, Sample{fl.start, now - fl.start, fl.in_flight, outcome});
  };
  auto serve_next = [&](Nanos now) {
    while (static_cast<int>(busy.size()) < workers && !queue.empty()) {
      busy.push({now + jittered(rng), queue.front()});
      queue.pop_front();
    }
  };

  for (Nanos next = 0; next < seconds;) {
    // The next event: an arrival, an answer, a deadline or the limit's own timer.
    Nanos now = next;
    if (!busy.empty()) now = std::min(now, busy.top().first);
    while (!timeouts.empty() && !flights[timeouts.front()].open) timeouts.pop_front();
    if (!timeouts.empty()) now = std::min(now, flights[timeouts.front()].start + deadline);
    now = std::min(now, L::next_event(state));
    L::advance(p, state, now);
    if (!busy.empty() && busy.top().first == now) {
      const std::size_t f = busy.top().second;
      busy.pop();
      if (flights[f].open) finish(f, now, Outcome::kSuccess);
      serve_next(now);
    } else if (!timeouts.empty() && flights[timeouts.front()].start + deadline == now) {
      finish(timeouts.front(), now, Outcome::kDropped);
    } else if (now == next) {
      if (now >= measure_from) r.lowest_limit = std::min(r.lowest_limit, L::limit(state));
      if (admits(L::limit(state), in_flight)) {
        ++in_flight;
        r.max_in_flight = std::max(r.max_in_flight, in_flight);
        flights.push_back(Flight{now, in_flight});
        queue.push_back(flights.size() - 1);
        timeouts.push_back(flights.size() - 1);
        serve_next(now);
      } else if (now >= measure_from) {
        r.refused += 0.1;
      }
      next += interval;
    }
  }
  r.limit = L::limit(state);
  return r;
}

// The goodput a static limit at C = 16 gets in the same loop, for comparison.
struct Static16 {
  struct Params {};
  struct State {};
  static State start(const Params&, Nanos, std::uint64_t) { return {}; }
  static std::int64_t update(const Params&, State&, const Sample&) { return 16; }
  static std::int64_t advance(const Params&, State&, Nanos) { return 16; }
  static Nanos next_event(const State&) { return kNoEvent; }
  static std::int64_t limit(const State&) { return 16; }
  static core::Expected<Params> validate(const Params& p) { return p; }
};

void show(const char* name, const Result& r) {
  std::printf(
      "%-20s goodput %6.0f/s  refused %6.0f/s  limit %4lld (lowest %4lld)  max in flight %4lld\n",
      name, r.goodput, r.refused, static_cast<long long>(r.limit),
      static_cast<long long>(r.lowest_limit), static_cast<long long>(r.max_in_flight));
}

constexpr double kCapacity = 1600;
constexpr Nanos kRun = 40 * core::kNanosPerSecond;

TEST(CollapseSim, AStaticLimitAtTheWorkerCountHoldsCapacityAtThreeTimesIt) {
  const auto r = run<Static16>({}, 3 * kCapacity, kRun);
  show("static 16", r);
  EXPECT_GT(r.goodput, 0.97 * kCapacity);
  EXPECT_EQ(r.max_in_flight, 16);
}

TEST(CollapseSim, WithoutALimitTheUpstreamCollapses) {
  Aimd::Params p;  // AIMD pinned at a limit no load reaches: no limit at all
  p.min_limit = p.initial_limit = p.max_limit = 1'000'000;
  const auto r = run<Aimd>(p, 3 * kCapacity, kRun);
  show("none", r);
  EXPECT_LT(r.goodput, 0.01 * kCapacity);
}

// With the references' defaults and nothing configured about the upstream, each limit keeps
// 3x overload from collapsing it; where each settles is its own answer to "how many in flight"
// (docs/overload.md has the table; --gtest_filter='CollapseSim.*' prints it). Checks: goodput
// above `share` of capacity, the final limit within [lo, hi].
template <AdaptiveLimit L>
void expect_at_three_x(const char* name, double share, std::int64_t lo, std::int64_t hi) {
  const auto r = run<L>(typename L::Params{}, 3 * kCapacity, kRun);
  show(name, r);
  EXPECT_GT(r.goodput, share * kCapacity) << name;
  EXPECT_GE(r.limit, lo) << name;
  EXPECT_LE(r.limit, hi) << name;
}

TEST(CollapseSim, EnvoysGradientAndVegasSettleBetweenCAndTwoC) {
  expect_at_three_x<EnvoyGradient>("envoy-gradient", 0.95, 16, 32);
  expect_at_three_x<Vegas>("vegas", 0.85, 16, 32);  // its limit dips to 8 between probes
}

// Gradient2 tolerates latency up to 1.5 x its long-term average, and that average follows the
// latency it lets in: it settles well above C, with queueing the 200 ms deadline still covers.
TEST(CollapseSim, Gradient2SettlesAboveTwoCWithinItsTolerance) {
  expect_at_three_x<Gradient2>("gradient2", 0.95, 33, 64);
  expect_at_three_x<Windowed<Gradient2>>("windowed gradient2", 0.95, 33, 64);
}

// AIMD is loss-based: with a 5 s timeout and no drop (200 in flight wait 125 ms, inside the
// 200 ms deadline) it climbs to max_limit and stays; goodput holds only because 200 x S / C
// fits the deadline.
TEST(CollapseSim, AimdClimbsToItsMaxWithoutLoss) {
  expect_at_three_x<Aimd>("aimd", 0.95, 200, 200);
}

}  // namespace
}  // namespace sluice::adaptive
