// The body reading policy: what is read before forwarding (request_buffering, http.body_buffer,
// http.max_buffered_body) and the pace a body must keep (timeouts.body between reads,
// http.min_body_rate on average).
#include "request_body.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace sluice::server::gateway {
namespace {

constexpr core::Nanos kS = core::kNanosPerSecond;

TEST(BodyPlan, ABufferedBodyIsReadUpToMaxBufferedBodyItsFirstBodyBufferBytesInMemory) {
  config::BodyLimits limits;  // body_buffer 64KiB, max_buffered_body 16MiB
  const BodyPlan plan = plan_body(true, limits, 16384);
  EXPECT_TRUE(plan.buffered);
  EXPECT_EQ(plan.memory, 65536u);
  EXPECT_EQ(plan.total, 16u << 20);
  // Memory never holds more than the whole buffered body.
  limits.max_buffered = 1000;
  EXPECT_EQ(plan_body(true, limits, 16384).memory, 1000u);
  EXPECT_EQ(plan_body(true, limits, 16384).total, 1000u);
}

TEST(BodyPlan, AStreamedBodyIsReadOnePieceAhead) {
  config::BodyLimits limits;
  config::BodyLimits none;
  none.max_buffered = 0;
  for (const BodyPlan plan : {plan_body(false, limits, 16384),  // request_buffering: off
                              plan_body(true, none, 16384)}) {  // max_buffered_body: 0
    EXPECT_FALSE(plan.buffered);
    EXPECT_EQ(plan.memory, 16384u);
    EXPECT_EQ(plan.total, 16384u);
  }
}

TEST(BodyPace, WithoutAMinimumRateTheDeadlineIsTheGapAfterTheLastBytes) {
  BodyPace pace(60 * kS, 0, 100 * kS);
  EXPECT_EQ(pace.deadline(), 160 * kS);
  pace.got(1, 150 * kS);
  EXPECT_EQ(pace.deadline(), 210 * kS);
  pace.got(0, 200 * kS);  // a read that brought nothing does not move it
  EXPECT_EQ(pace.deadline(), 210 * kS);
}

TEST(BodyPace, ATrickleBelowTheMinimumRateRunsOutAfterTheGap) {
  // A byte every 2 s against 1 KiB/s with 60 s of slack: each byte buys ~1 ms, so the body is
  // due at about 60 s, however regularly it trickles (nginx alone would wait for ever).
  BodyPace pace(60 * kS, 1024, 0);
  core::Nanos now = 0;
  for (int i = 0; i < 30; ++i) {
    now += 2 * kS;
    ASSERT_LT(now, pace.deadline());
    pace.got(1, now);
  }
  EXPECT_EQ(pace.deadline(), 60 * kS + 30 * kS / 1024);
  now += 2 * kS;
  EXPECT_GT(now, pace.deadline());
}

TEST(BodyPace, ABodyAtTheMinimumRateNeverRunsOut) {
  BodyPace pace(10 * kS, 1000, 0);
  for (core::Nanos t = kS; t <= 1000 * kS; t += kS) {
    ASSERT_LT(t, pace.deadline()) << t / kS;
    pace.got(1000, t);
  }
  // A second of bytes buys a second: the slack is still the gap.
  EXPECT_EQ(pace.deadline(), 1010 * kS);
}

TEST(BodyPace, AHugeBodyDoesNotOverflowTheDeadline) {
  BodyPace pace(kS, 1, 0);
  pace.got(std::numeric_limits<std::uint64_t>::max() / 2, 5 * kS);
  EXPECT_EQ(pace.deadline(), 6 * kS);  // the gap after the last bytes
}

}  // namespace
}  // namespace sluice::server::gateway
