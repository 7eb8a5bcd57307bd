// AIMD as Netflix's AIMDLimit: +1 while half the limit is in use, x0.9 on a drop or an RTT
// over the 5 s timeout, clamped to [min_limit, max_limit]. Numbers worked by hand in comments.
#include "sluice/adaptive/aimd.hpp"

#include <gtest/gtest.h>

#include "support/units.hpp"

namespace sluice::adaptive {
namespace {

using test::units::ms;

Sample ok(std::int64_t in_flight, Nanos rtt = ms(1)) {
  return Sample{0, rtt, in_flight, Outcome::kSuccess};
}
Sample drop() { return Sample{0, ms(1), 0, Outcome::kDropped}; }

TEST(Aimd, DefaultsAreTheBuildersOfNetflix) {
  const Aimd::Params p;
  EXPECT_EQ(p.min_limit, 20);
  EXPECT_EQ(p.initial_limit, 20);
  EXPECT_EQ(p.max_limit, 200);
  EXPECT_EQ(p.backoff_ratio, 0.9);
  EXPECT_EQ(p.timeout, 5 * core::kNanosPerSecond);
}

// AIMDLimitTest.increaseOnSuccess and decreaseOnDrops, the reference's own numbers.
TEST(Aimd, ASuccessWithHalfTheLimitInUseAddsOneAndADropTakesTenPercent) {
  const Aimd::Params p;
  auto s = Aimd::start(p, 0, 0);
  EXPECT_EQ(Aimd::update(p, s, ok(10)), 21);  // 10 x 2 >= 20: 20 + 1
  Aimd::Params thirty = p;
  thirty.initial_limit = 30;
  auto t = Aimd::start(thirty, 0, 0);
  EXPECT_EQ(Aimd::update(thirty, t, drop()), 27);  // (int) (30 x 0.9)
}

TEST(Aimd, DropsBackOffMultiplicativelyAndSuccessesClimbBackByOne) {
  Aimd::Params p;
  p.min_limit = 1;
  auto s = Aimd::start(p, 0, 0);
  EXPECT_EQ(Aimd::update(p, s, drop()), 18);           // 20 x 0.9 = 18
  EXPECT_EQ(Aimd::update(p, s, drop()), 16);           // 18 x 0.9 = 16.2
  EXPECT_EQ(Aimd::update(p, s, drop()), 14);           // 16 x 0.9 = 14.4
  EXPECT_EQ(Aimd::update(p, s, ok(7)), 15);            // 7 x 2 >= 14
  EXPECT_EQ(Aimd::update(p, s, ok(7)), 15);            // 7 x 2 < 15: the limit is not in use
  EXPECT_EQ(Aimd::update(p, s, ok(8, ms(6000))), 13);  // 6 s > the 5 s timeout: 15 x 0.9 = 13.5
}

TEST(Aimd, StaysWithinMinAndMax) {
  Aimd::Params p;
  auto s = Aimd::start(p, 0, 0);
  EXPECT_EQ(Aimd::update(p, s, drop()), 20);  // 18 is below min_limit 20
  p.max_limit = 21;
  EXPECT_EQ(Aimd::update(p, s, ok(20)), 21);
  EXPECT_EQ(Aimd::update(p, s, ok(20)), 21);  // successOverflow: still at the max
}

TEST(Aimd, AnIgnoredSampleChangesNothing) {
  Aimd::Params p;
  p.min_limit = 1;
  auto s = Aimd::start(p, 0, 0);
  EXPECT_EQ(Aimd::update(p, s, Sample{0, ms(9000), 20, Outcome::kIgnored}), 20);
  EXPECT_EQ(Aimd::next_event(s), kNoEvent);
}

TEST(Aimd, ValidateRefusesWhatTheBuilderRefuses) {
  Aimd::Params p;
  p.backoff_ratio = 1.0;
  EXPECT_EQ(Aimd::validate(p).error(), "aimd: backoff_ratio must be in [0.5, 1.0)");
  p.backoff_ratio = 0.4;
  EXPECT_FALSE(Aimd::validate(p).ok());
  p = Aimd::Params{};
  p.timeout = 0;
  EXPECT_FALSE(Aimd::validate(p).ok());
  EXPECT_TRUE(Aimd::validate(Aimd::Params{}).ok());
}

}  // namespace
}  // namespace sluice::adaptive
