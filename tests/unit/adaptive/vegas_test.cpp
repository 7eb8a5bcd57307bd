// Vegas as Netflix's VegasLimit: queue = ceil(limit x (1 - rtt_noload / rtt)); no queue grows
// the limit by beta, a small queue by log10(limit), one over beta shrinks it by log10(limit).
#include "sluice/adaptive/vegas.hpp"

#include <gtest/gtest.h>

#include "adaptive/samples.hpp"
#include "support/units.hpp"

namespace sluice::adaptive {
namespace {

using test::success;
using test::units::ms;

// VegasLimitTest.create(): alpha 3, beta 6, smoothing 1, initial 10, max 20.
Vegas::Params netflix_test_params() {
  Vegas::Params p;
  p.alpha = 3;
  p.beta = 6;
  p.initial_limit = 10;
  p.max_concurrency = 20;
  return p;
}

TEST(Vegas, Log10RootIsNetflixsLookupTable) {
  EXPECT_EQ(log10_root(0), 1);
  EXPECT_EQ(log10_root(9), 1);
  EXPECT_EQ(log10_root(10), 1);
  EXPECT_EQ(log10_root(100), 2);
  EXPECT_EQ(log10_root(999), 2);
  EXPECT_EQ(log10_root(10000), 4);
}

// VegasLimitTest.increaseLimit: the first sample is the no-load RTT; a second equal one
// means no queue (0 <= threshold log10(10) = 1): 10 + beta 6 = 16.
TEST(Vegas, NoQueueGrowsTheLimitByBeta) {
  const auto p = netflix_test_params();
  auto s = Vegas::start(p, 0, 1);
  EXPECT_EQ(Vegas::update(p, s, success(ms(10), 10)), 10);
  EXPECT_EQ(s.rtt_noload, ms(10));
  EXPECT_EQ(Vegas::update(p, s, success(ms(10), 11)), 16);
}

// VegasLimitTest.decreaseLimit: 50 ms against 10 ms is a queue of ceil(10 x 0.8) = 8 > beta 6,
// so 10 - log10(10) = 9.
TEST(Vegas, AQueueOverBetaShrinksTheLimitByItsLog) {
  const auto p = netflix_test_params();
  auto s = Vegas::start(p, 0, 1);
  Vegas::update(p, s, success(ms(10), 10));
  EXPECT_EQ(Vegas::update(p, s, success(ms(50), 11)), 9);
}

// VegasLimitTest.noChangeIfWithinThresholds: 14 ms is a queue of ceil(10 x 4/14) = 3, between
// alpha 3 and beta 6: no change.
TEST(Vegas, AQueueBetweenAlphaAndBetaKeepsTheLimit) {
  const auto p = netflix_test_params();
  auto s = Vegas::start(p, 0, 1);
  Vegas::update(p, s, success(ms(10), 10));
  EXPECT_EQ(Vegas::update(p, s, success(ms(14), 14)), 10);
}

// VegasLimitTest.largeLimitIncrease with the default functions: at 10000, beta = 6 x 4 = 24.
TEST(Vegas, DefaultBetaIsSixTimesTheLog) {
  Vegas::Params p;
  p.initial_limit = 10000;
  p.max_concurrency = 20000;
  auto s = Vegas::start(p, 0, 1);
  EXPECT_EQ(Vegas::update(p, s, success(10 * core::kNanosPerSecond, 5000)), 10000);
  EXPECT_EQ(Vegas::update(p, s, success(10 * core::kNanosPerSecond, 6000)), 10024);
}

TEST(Vegas, ADropShrinksAndLowUseHoldsTheLimit) {
  const auto p = netflix_test_params();
  auto s = Vegas::start(p, 0, 1);
  Vegas::update(p, s, success(ms(10), 10));
  EXPECT_EQ(Vegas::update(p, s, success(ms(10), 4)), 10);  // 4 x 2 < 10: app-limited
  EXPECT_EQ(Vegas::update(p, s, Sample{0, ms(10), 10, Outcome::kDropped}), 9);  // 10 - 1
}

// A probe replaces the no-load RTT with the current one every jitter x multiplier x limit
// samples: jitter 0.5, multiplier 1, limit 4 probes at the 2nd sample.
TEST(Vegas, AProbeTakesTheCurrentRttAsTheNewNoLoadRtt) {
  Vegas::Params p;
  p.initial_limit = 4;
  p.probe_multiplier = 1;
  auto s = Vegas::start(p, 0, 1);
  s.probe_jitter = 0.5;
  Vegas::update(p, s, success(ms(10), 4));  // count 1 < 2: the first no-load RTT, 10 ms
  EXPECT_EQ(s.rtt_noload, ms(10));
  Vegas::update(p, s, success(ms(30), 4));  // count 2 >= 0.5 x 1 x 4: a probe
  EXPECT_EQ(s.rtt_noload, ms(30));
  EXPECT_EQ(s.probe_count, 0);
  EXPECT_GE(s.probe_jitter, 0.5);
  EXPECT_LT(s.probe_jitter, 1.0);
}

TEST(Vegas, TheSameSeedGivesTheSameJitter) {
  const Vegas::Params p;
  EXPECT_EQ(Vegas::start(p, 0, 42).probe_jitter, Vegas::start(p, 0, 42).probe_jitter);
  EXPECT_NE(Vegas::start(p, 0, 42).probe_jitter, Vegas::start(p, 0, 43).probe_jitter);
}

TEST(Vegas, ZeroRttAndIgnoredSamplesChangeNothing) {
  const auto p = netflix_test_params();
  auto s = Vegas::start(p, 0, 1);
  EXPECT_EQ(Vegas::update(p, s, success(0, 10)), 10);
  EXPECT_EQ(Vegas::update(p, s, Sample{0, ms(10), 10, Outcome::kIgnored}), 10);
  EXPECT_EQ(s.probe_count, 0);
  EXPECT_EQ(s.rtt_noload, 0);
}

}  // namespace
}  // namespace sluice::adaptive
