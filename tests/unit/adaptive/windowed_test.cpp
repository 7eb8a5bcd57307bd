// Netflix's WindowedLimit: samples pooled for a window (min RTT x 2 within [1 s, 1 s]), the
// inner limit sees one sample per window of at least 10: the mean RTT, the most in flight and
// whether any dropped.
#include "sluice/adaptive/windowed.hpp"

#include <gtest/gtest.h>

#include "sluice/adaptive/aimd.hpp"
#include "support/units.hpp"

namespace sluice::adaptive {
namespace {

using test::units::ms;
using WindowedAimd = Windowed<Aimd>;

WindowedAimd::Params params() {
  WindowedAimd::Params p;
  p.inner.min_limit = 1;
  return p;
}

TEST(Windowed, TheInnerLimitSeesOneSamplePerWindowOfTen) {
  const auto p = params();
  auto s = WindowedAimd::start(p, 0, 0);
  // The first sample ends a window of one (too small) and sets the next end at 10 ms + 1 s.
  EXPECT_EQ(WindowedAimd::update(p, s, Sample{0, ms(10), 10, Outcome::kSuccess}), 20);
  EXPECT_EQ(s.next_update_time, ms(10) + ms(1000));
  // Ten samples within that second: nothing reaches AIMD yet.
  for (int i = 1; i <= 10; ++i) {
    const auto in_flight = i == 5 ? 12 : 3;
    EXPECT_EQ(WindowedAimd::update(p, s, Sample{ms(100 * i), ms(10), in_flight, Outcome::kSuccess}),
              20);
  }
  // The 11th, past 1010 ms, closes the window: mean 10 ms, max in flight 12 (12 x 2 >= 20), +1.
  EXPECT_EQ(WindowedAimd::update(p, s, Sample{ms(1100), ms(10), 3, Outcome::kSuccess}), 21);
  EXPECT_EQ(s.window.count, 0);
}

TEST(Windowed, OneDropInAWindowIsADropForTheInnerLimit) {
  const auto p = params();
  auto s = WindowedAimd::start(p, 0, 0);
  WindowedAimd::update(p, s, Sample{0, ms(10), 10, Outcome::kSuccess});
  for (int i = 1; i <= 10; ++i) {
    WindowedAimd::update(
        p, s, Sample{ms(50 * i), ms(10), 3, i == 7 ? Outcome::kDropped : Outcome::kSuccess});
  }
  EXPECT_EQ(WindowedAimd::update(p, s, Sample{ms(1100), ms(10), 3, Outcome::kSuccess}), 18);
}

TEST(Windowed, SamplesUnder100MicrosecondsAreNotCounted) {
  const auto p = params();
  auto s = WindowedAimd::start(p, 0, 0);
  WindowedAimd::update(p, s, Sample{0, 99 * core::kNanosPerMicro, 10, Outcome::kSuccess});
  EXPECT_EQ(s.window.count, 0);
  EXPECT_EQ(s.next_update_time, 0);
}

TEST(Windowed, ValidateRefusesAWindowUnder100Ms) {
  auto p = params();
  p.min_window_time = ms(99);
  EXPECT_FALSE(WindowedAimd::validate(p).ok());
  p = params();
  p.window_size = 9;
  EXPECT_EQ(WindowedAimd::validate(p).error(), "windowed: window_size must be >= 10");
}

}  // namespace
}  // namespace sluice::adaptive
