// A route's adaptive limit (src/engine/adaptive_gate.hpp): admits while fewer than the limit
// hold a permit, queues by tier (the highest first, FIFO within one) when max_wait is set, and
// feeds each finished request to its algorithm. AIMD's numbers, as docs/overload.md gives them.
#include "adaptive_gate.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sluice::engine::detail {
namespace {

constexpr core::Nanos kMs = core::kNanosPerMilli;

AdaptiveGate aimd_gate(std::int64_t initial, core::Nanos max_wait) {
  config::AdaptiveConcurrency c;
  c.algorithm = config::AdaptiveAlgorithm::kAimd;
  c.min_limit = 1;
  c.initial = initial;
  c.max_limit = 100;
  c.max_wait = max_wait;
  return AdaptiveGate(c, *make_adaptive_limit(c, 0, 1));
}

using Admit = AdaptiveGate::Admit;

TEST(AdaptiveGate, AdmitsUpToTheLimitAndRefusesTheNextAtOnce) {
  AdaptiveGate gate = aimd_gate(2, 0);
  AdaptiveGate::Permit a, b, c;
  std::uint64_t ticket = 0;
  EXPECT_EQ(gate.acquire(0, 0, a, ticket), Admit::kGranted);
  EXPECT_EQ(gate.acquire(0, 0, b, ticket), Admit::kGranted);
  EXPECT_EQ(b.in_flight, 2);
  EXPECT_EQ(gate.acquire(3, 0, c, ticket), Admit::kRefused);
  EXPECT_EQ(gate.gauges().shed[3], 1u);
  gate.release(a, 10 * kMs, adaptive::Outcome::kIgnored);
  EXPECT_EQ(gate.acquire(0, 10 * kMs, c, ticket), Admit::kGranted);
  EXPECT_EQ(gate.gauges().in_flight, 2);
}

TEST(AdaptiveGate, AFreedPermitGoesToTheHighestTierWaitingThenInArrivalOrder) {
  AdaptiveGate gate = aimd_gate(1, 50 * kMs);
  AdaptiveGate::Permit held, p;
  std::uint64_t low = 0, high1 = 0, high2 = 0;
  ASSERT_EQ(gate.acquire(0, 0, held, low), Admit::kGranted);
  ASSERT_EQ(gate.acquire(0, 0, p, low), Admit::kQueued);
  ASSERT_EQ(gate.acquire(9, 0, p, high1), Admit::kQueued);
  ASSERT_EQ(gate.acquire(9, 0, p, high2), Admit::kQueued);
  EXPECT_EQ(gate.gauges().queued, 3);
  std::vector<int> woken;
  gate.on_grant(low, [&] { woken.push_back(0); });
  gate.on_grant(high1, [&] { woken.push_back(1); });
  gate.on_grant(high2, [&] { woken.push_back(2); });
  gate.release(held, 10 * kMs, adaptive::Outcome::kIgnored);
  EXPECT_EQ(woken, std::vector<int>{1});
  ASSERT_TRUE(gate.claim(high1, p));
  EXPECT_EQ(p.start, 10 * kMs);
  // max_wait passes for the others: they leave the queue refused, counted by tier.
  EXPECT_FALSE(gate.claim(low, p));
  EXPECT_FALSE(gate.claim(high2, p));
  EXPECT_EQ(gate.gauges().shed[0], 1u);
  EXPECT_EQ(gate.gauges().shed[9], 1u);
  EXPECT_EQ(gate.gauges().queued, 0);
}

TEST(AdaptiveGate, ADropCutsTheLimitAndASuccessAtHalfLoadRaisesIt) {
  AdaptiveGate gate = aimd_gate(20, 0);
  AdaptiveGate::Permit p;
  std::uint64_t ticket = 0;
  ASSERT_EQ(gate.acquire(0, 0, p, ticket), Admit::kGranted);
  gate.release(p, 5 * kMs, adaptive::Outcome::kDropped);
  EXPECT_EQ(gate.gauges().limit, 18);  // 20 x 0.9
  ASSERT_EQ(gate.acquire(0, 10 * kMs, p, ticket), Admit::kGranted);
  // As if admitted with 9 in flight: 9 x 2 >= 18, so a success grows the limit by one.
  gate.release({10 * kMs, 9}, 14 * kMs, adaptive::Outcome::kSuccess);
  EXPECT_EQ(gate.gauges().limit, 19);
  EXPECT_EQ(gate.gauges().min_rtt, 4 * kMs);
}

TEST(AdaptiveGate, AnAlgorithmRefusesParametersItsReferenceRefuses) {
  config::AdaptiveConcurrency c;
  c.algorithm = config::AdaptiveAlgorithm::kAimd;
  c.min_limit = 0;
  EXPECT_FALSE(make_adaptive_limit(c, 0, 1));
}

}  // namespace
}  // namespace sluice::engine::detail
