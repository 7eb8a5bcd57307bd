// Gradient2 as Netflix's Gradient2Limit: gradient = clamp(1.5 x long RTT / RTT, 0.5, 1),
// new = limit x gradient + 4, smoothed 0.2 toward it; the long RTT is a mean over the first
// 10 samples, then an exponential average of window 600.
#include "sluice/adaptive/gradient2.hpp"

#include <gtest/gtest.h>

#include "adaptive/samples.hpp"
#include "support/units.hpp"

namespace sluice::adaptive {
namespace {

using test::success;
using test::units::ms;

TEST(Gradient2, DefaultsAreTheBuildersOfNetflix) {
  const Gradient2::Params p;
  EXPECT_EQ(p.initial_limit, 20);
  EXPECT_EQ(p.min_limit, 20);
  EXPECT_EQ(p.max_concurrency, 200);
  EXPECT_EQ(p.smoothing, 0.2);
  EXPECT_EQ(p.queue_size, 4);
  EXPECT_EQ(p.long_window, 600);
  EXPECT_EQ(p.rtt_tolerance, 1.5);
}

// Steady latency: gradient 1, so each sample moves the limit 0.2 x 4 = 0.8 up.
// Then one 40 ms sample: long RTT = mean(10, 10, 10, 40) = 17.5 ms, gradient
// 1.5 x 17.5 / 40 = 0.65625; 22.4 x 0.65625 + 4 = 18.7; 22.4 x 0.8 + 18.7 x 0.2 = 21.66.
TEST(Gradient2, SteadyLatencyGrowsTheLimitAndARiseCutsIt) {
  const Gradient2::Params p;
  auto s = Gradient2::start(p, 0, 0);
  EXPECT_EQ(Gradient2::update(p, s, success(ms(10), 20)), 20);  // 20.8
  EXPECT_EQ(Gradient2::update(p, s, success(ms(10), 20)), 21);  // 21.6
  EXPECT_EQ(Gradient2::update(p, s, success(ms(10), 20)), 22);  // 22.4
  EXPECT_NEAR(s.estimated_limit, 22.4, 1e-9);
  EXPECT_EQ(Gradient2::update(p, s, success(ms(40), 20)), 21);
  EXPECT_NEAR(s.estimated_limit, 21.66, 1e-9);
  EXPECT_NEAR(s.long_rtt.value, 17.5e6, 1e-3);
  // Back to 10 ms: long RTT = 80 / 5 = 16 ms, 1.5 x 1.6 caps at 1: 21.66 x 0.8 + 25.66 x 0.2.
  EXPECT_EQ(Gradient2::update(p, s, success(ms(10), 20)), 22);
  EXPECT_NEAR(s.estimated_limit, 22.46, 1e-9);
}

// A long RTT over twice the current one is pulled down 5% at once: after five 10 ms samples a
// 3 ms one makes the mean 53 / 6 = 8.83 ms, over 2 x 3 ms, so it becomes 8.83 x 0.95.
TEST(Gradient2, ALongRttOverTwiceTheCurrentDecaysFivePercent) {
  const Gradient2::Params p;
  auto s = Gradient2::start(p, 0, 0);
  for (int i = 0; i < 5; ++i) Gradient2::update(p, s, success(ms(10), 20));
  Gradient2::update(p, s, success(ms(3), 20));
  EXPECT_NEAR(s.long_rtt.value, 53e6 / 6 * 0.95, 1e-3);
}

// After the 10 warm-up samples the average moves by 2 / 601 of the difference.
TEST(Gradient2, AfterWarmUpTheLongRttIsAnExponentialAverage) {
  const Gradient2::Params p;
  auto s = Gradient2::start(p, 0, 0);
  for (int i = 0; i < 10; ++i) Gradient2::update(p, s, success(ms(10), 20));
  EXPECT_NEAR(s.long_rtt.value, 10e6, 1e-3);
  Gradient2::update(p, s, success(ms(40), 20));
  EXPECT_NEAR(s.long_rtt.value, 10e6 + 30e6 * 2 / 601, 1e-3);
}

TEST(Gradient2, LowUseHoldsTheLimitAndTheFloorIsMinLimit) {
  const Gradient2::Params p;
  auto s = Gradient2::start(p, 0, 0);
  EXPECT_EQ(Gradient2::update(p, s, success(ms(10), 9)), 20);  // 9 < 20 / 2: app-limited
  EXPECT_EQ(s.estimated_limit, 20);
  for (int i = 0; i < 10; ++i) Gradient2::update(p, s, success(ms(10), 20));
  EXPECT_EQ(Gradient2::limit(s), 28);  // 20 + 10 x 0.8
  // 1 s against a long RTT near 10 ms: gradient 0.5, each sample takes the limit to
  // 0.8 x L + 0.2 x (0.5 x L + 4) = 0.9 x L + 0.8, from 28 toward 8; min_limit holds it at 20.
  EXPECT_EQ(Gradient2::update(p, s, success(ms(1000), 20)), 26);  // 28 x 0.9 + 0.8
  for (int i = 0; i < 10; ++i) Gradient2::update(p, s, success(ms(1000), 20));
  EXPECT_EQ(Gradient2::limit(s), 20);
}

// Gradient2 is latency-only: a drop at steady latency is just another sample.
TEST(Gradient2, ADropIsNotALossSignal) {
  const Gradient2::Params p;
  auto a = Gradient2::start(p, 0, 0);
  auto b = a;
  Gradient2::update(p, a, success(ms(10), 20));
  Gradient2::update(p, b, Sample{0, ms(10), 20, Outcome::kDropped});
  EXPECT_EQ(a.estimated_limit, b.estimated_limit);
}

TEST(Gradient2, ValidateRefusesAToleranceBelowOne) {
  Gradient2::Params p;
  p.rtt_tolerance = 0.9;
  EXPECT_EQ(Gradient2::validate(p).error(), "gradient2: rtt_tolerance must be >= 1.0");
}

}  // namespace
}  // namespace sluice::adaptive
