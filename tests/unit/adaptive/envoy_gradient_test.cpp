// Envoy's gradient controller: a minRTT window pinned at min_concurrency (3) until 50 samples,
// then every 100 ms: gradient = clamp(minRTT x 1.25 / p50, 0.5, 2), limit = limit x gradient
// + sqrt(limit x gradient), truncated, within [3, 1000].
#include "sluice/adaptive/envoy_gradient.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/units.hpp"

namespace sluice::adaptive {
namespace {

using test::units::ms;
using EG = EnvoyGradient;

// One request of `rtt` finishing at `end`.
Sample done(Nanos end, Nanos rtt) { return Sample{end - rtt, rtt, 0, Outcome::kSuccess}; }

// Ten samples of `rtt` ending within the sample window that ends at `window_end`, then the
// window's reset; returns the new limit.
std::int64_t window_of(const EG::Params& p, EG::State& s, Nanos window_end, Nanos rtt) {
  for (int i = 0; i < 10; ++i) EG::update(p, s, done(window_end - ms(50) + ms(i), rtt));
  return EG::advance(p, s, window_end);
}

// The minRTT window of the start: 50 samples of 10 ms ending at 11..60 ms, before the first
// reset at 100 ms. minRTT = the p50 of fifty 10000 us values = (int) 10490.196 us.
EG::State measured(const EG::Params& p) {
  auto s = EG::start(p, 0, 7);
  for (int i = 1; i <= 50; ++i) EG::update(p, s, done(ms(10) + ms(i), ms(10)));
  return s;
}

TEST(EnvoyGradient, DefaultsAreEnvoys) {
  const EG::Params p;
  EXPECT_EQ(p.max_concurrency_limit, 1000u);
  EXPECT_EQ(p.sample_aggregate_percentile, 50);
  EXPECT_EQ(p.request_count, 50u);
  EXPECT_EQ(p.jitter, 15);
  EXPECT_EQ(p.min_concurrency, 3u);
  EXPECT_EQ(p.buffer, 25);
}

TEST(EnvoyGradient, StartsInAMinRttWindowPinnedAtMinConcurrency) {
  const EG::Params p;
  auto s = EG::start(p, 0, 7);
  EXPECT_EQ(EG::limit(s), 3);
  EXPECT_TRUE(EG::in_min_rtt_window(s));
  EXPECT_EQ(EG::next_event(s), ms(100));  // the sample reset timer, idle in the window
  EXPECT_EQ(EG::advance(p, s, ms(100)), 3);
  EXPECT_EQ(EG::next_event(s), kNoEvent);  // not re-armed until the window ends
  for (int i = 1; i < 50; ++i) EG::update(p, s, done(ms(100) + ms(i), ms(10)));
  EXPECT_TRUE(EG::in_min_rtt_window(s));  // 49 samples: not yet
}

TEST(EnvoyGradient, FiftySamplesEndTheMinRttWindowAtTheirMedian) {
  const EG::Params p;
  auto s = measured(p);
  EXPECT_FALSE(EG::in_min_rtt_window(s));
  EXPECT_EQ(s.min_rtt, 10490 * core::kNanosPerMicro);
  EXPECT_EQ(EG::limit(s), 3);  // the limit before the window (3 at the start)
  // Timers re-armed from the 50th sample's end (60 ms): a reset at 160 ms, the next minRTT
  // window after 60 s plus a jitter in [0, ceil(60000 ms x 15%) = 9000 ms).
  EXPECT_EQ(s.sample_timer, ms(160));
  EXPECT_GE(s.min_rtt_timer, ms(60) + ms(60000));
  EXPECT_LT(s.min_rtt_timer, ms(60) + ms(69000));
}

// At the minRTT the gradient is its buffer over it: 10490 x 1.25 / 10454 (the p50 of ten 10 ms
// samples, 10000 + 5 / 11 x 1000) = 1.2543; 3 -> 3.76 + 1.94 = 5.70 -> 5 -> 8 -> 13 -> 20.
// Then 20 ms (p50 20454): gradient 13112.5 / 20454 = 0.6411, 20 x 0.6411 = 12.82 + 3.58 -> 16;
// 100 ms: the gradient stops at 0.5, 16 x 0.5 = 8 + 2.83 -> 10.
TEST(EnvoyGradient, TheLimitGrowsByItsSquareRootAtTheMinRttAndFallsWithLatency) {
  const EG::Params p;
  auto s = measured(p);
  const double g = 10490 * 1.25 / 10454.0;
  EXPECT_EQ(static_cast<int>(3 * g + std::sqrt(3 * g)), 5);
  EXPECT_EQ(window_of(p, s, ms(160), ms(10)), 5);
  EXPECT_EQ(window_of(p, s, ms(260), ms(10)), 8);
  EXPECT_EQ(window_of(p, s, ms(360), ms(10)), 13);
  EXPECT_EQ(window_of(p, s, ms(460), ms(10)), 20);
  EXPECT_EQ(s.sample_rtt, 10454 * core::kNanosPerMicro);
  EXPECT_EQ(window_of(p, s, ms(560), ms(20)), 16);
  EXPECT_EQ(window_of(p, s, ms(660), ms(100)), 10);
}

TEST(EnvoyGradient, AnEmptySampleWindowKeepsTheLimit) {
  const EG::Params p;
  auto s = measured(p);
  EXPECT_EQ(window_of(p, s, ms(160), ms(10)), 5);
  EXPECT_EQ(EG::advance(p, s, ms(260)), 5);
  EXPECT_EQ(s.sample_timer, ms(360));
}

// An hour without samples: the resets that found nothing are skipped in one step, and the
// timers stand where firing each one would have left them.
TEST(EnvoyGradient, AnIdleHourKeepsTheTimersOnTheirGrid) {
  EG::Params p;
  p.min_rtt_interval = 7200 * core::kNanosPerSecond;
  p.jitter = 0;
  auto s = measured(p);
  EXPECT_EQ(window_of(p, s, ms(160), ms(10)), 5);
  EXPECT_EQ(EG::advance(p, s, ms(3'600'000)), 5);
  EXPECT_EQ(s.sample_timer, ms(3'600'060));        // 160 ms + k x 100 ms, the first after now
  EXPECT_EQ(EG::advance(p, s, ms(7'200'060)), 3);  // the minRTT window, at 60 ms + 7200 s
  EXPECT_TRUE(EG::in_min_rtt_window(s));
}

TEST(EnvoyGradient, TheLimitIsCappedAtMaxConcurrencyLimit) {
  EG::Params p;
  p.max_concurrency_limit = 7;
  auto s = measured(p);
  EXPECT_EQ(window_of(p, s, ms(160), ms(10)), 5);
  EXPECT_EQ(window_of(p, s, ms(260), ms(10)), 7);  // 8 capped
}

// Five windows in a row at the floor (3) outside a minRTT window: the minRTT is measured anew
// at once, and samples of requests sent before the new window are disregarded.
TEST(EnvoyGradient, FiveWindowsAtTheFloorStartANewMinRttWindow) {
  const EG::Params p;
  auto s = measured(p);
  for (int w = 1; w <= 4; ++w) window_of(p, s, ms(60 + 100 * w), ms(100));
  EXPECT_FALSE(EG::in_min_rtt_window(s));
  EXPECT_EQ(s.consecutive_min, 4u);
  window_of(p, s, ms(560), ms(100));
  EXPECT_TRUE(EG::in_min_rtt_window(s));
  EXPECT_EQ(s.min_rtt_epoch, ms(560));
  EG::update(p, s, Sample{ms(559), ms(5), 0, Outcome::kSuccess});  // sent before the epoch
  EXPECT_EQ(s.samples.count(), 0u);
  EG::update(p, s, Sample{ms(560), ms(5), 0, Outcome::kSuccess});
  EXPECT_EQ(s.samples.count(), 1u);
}

TEST(EnvoyGradient, ANewMinRttWindowStartsWhenItsTimerIsDue) {
  EG::Params p;
  p.jitter = 0;
  auto s = measured(p);
  EXPECT_EQ(s.min_rtt_timer, ms(60) + ms(60000));
  window_of(p, s, ms(160), ms(10));
  EG::advance(p, s, ms(60060));
  EXPECT_TRUE(EG::in_min_rtt_window(s));
  EXPECT_EQ(EG::limit(s), 3);
  EXPECT_EQ(s.deferred_limit, 5u);  // restored when the window's 50 samples are in
  for (int i = 1; i <= 50; ++i) EG::update(p, s, done(ms(60100) + ms(i), ms(10)));
  EXPECT_EQ(EG::limit(s), 5);
}

TEST(EnvoyGradient, IgnoredSamplesAreCancelledNotRecorded) {
  const EG::Params p;
  auto s = EG::start(p, 0, 7);
  EG::update(p, s, Sample{ms(1), ms(10), 0, Outcome::kIgnored});
  EXPECT_EQ(s.samples.count(), 0u);
  EG::update(p, s, Sample{ms(1), ms(10), 0, Outcome::kDropped});  // a 504 is still a sample
  EXPECT_EQ(s.samples.count(), 1u);
}

TEST(EnvoyGradient, ValidateRefusesZeroCounts) {
  EG::Params p;
  p.request_count = 0;
  EXPECT_FALSE(EG::validate(p).ok());
  p = EG::Params{};
  p.update_interval = 0;
  EXPECT_FALSE(EG::validate(p).ok());
  EXPECT_TRUE(EG::validate(EG::Params{}).ok());
}

}  // namespace
}  // namespace sluice::adaptive
