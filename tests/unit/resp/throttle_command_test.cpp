// CL.THROTTLE against numbers worked out by hand with redis-cell's algorithm
// (docs/references.md section 2): its own test table (limit 5, 1 per second) and a few rates
// whose emission interval or times have fractions.
#include "throttle_command.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::server::resp {
namespace {

constexpr core::Nanos kSec = core::kNanosPerSecond;
constexpr core::Nanos kMs = core::kNanosPerMilli;
// An arbitrary steady-clock instant, far from 0.
constexpr core::Nanos kStart = 1'000'000 * kSec;

// The arguments parsed here, decided by the engine (its CL.THROTTLE table), replied here.
class Throttle : public ::testing::Test {
 protected:
  ThrottleReply call(std::vector<std::string> argv, core::Nanos now) {
    std::vector<std::string_view> args;
    args.emplace_back("CL.THROTTLE");
    for (const auto& a : argv) args.emplace_back(a);
    auto parsed = parse_throttle_args(args);
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
    engine::Outcome out;
    engine_.decide(*parsed, now, out);
    EXPECT_NE(out.verdict, engine::Verdict::kInvalid) << out.error;
    return to_throttle_reply(out.total);
  }
  std::string error(std::vector<std::string> argv) {
    std::vector<std::string_view> args;
    args.emplace_back("CL.THROTTLE");
    for (const auto& a : argv) args.emplace_back(a);
    auto parsed = parse_throttle_args(args);
    if (!parsed) return parsed.error();
    engine::Outcome out;
    engine_.decide(*parsed, kStart, out);
    return out.verdict == engine::Verdict::kInvalid ? out.error : "";
  }

  engine::Engine engine_{config::RuleSet{}, 0};
};

// redis-cell's it_rate_limits: max_burst 4 (limit 5), 1 per second.
TEST_F(Throttle, MatchesRedisCellsOwnTable) {
  struct Case {
    core::Nanos at;
    std::string quantity;
    ThrottleReply want;  // limited, limit, remaining, retry_after, reset_after
  };
  const Case cases[] = {
      // A request above the limit never fits: retry -1, nothing stored (reset 0).
      {0, "6", {1, 5, 5, -1, 0}},
      {0, "1", {0, 5, 4, -1, 1}},
      {0, "1", {0, 5, 3, -1, 2}},
      {0, "1", {0, 5, 2, -1, 3}},
      {0, "1", {0, 5, 1, -1, 4}},
      {0, "1", {0, 5, 0, -1, 5}},
      {0, "1", {1, 5, 0, 1, 5}},
      {3000 * kMs, "1", {0, 5, 2, -1, 3}},
      // reset 3.9 s is sent as 4: redis-cell rounds a millisecond part up.
      {3100 * kMs, "1", {0, 5, 1, -1, 4}},
      {4000 * kMs, "1", {0, 5, 1, -1, 4}},
      {8000 * kMs, "1", {0, 5, 4, -1, 1}},
      {9500 * kMs, "1", {0, 5, 4, -1, 1}},
      {9500 * kMs, "0", {0, 5, 4, -1, 1}},  // quantity 0 peeks
      {9500 * kMs, "2", {0, 5, 2, -1, 3}},
      {9500 * kMs, "5", {1, 5, 2, 3, 3}},
  };
  int i = 0;
  for (const Case& c : cases) {
    EXPECT_EQ(call({"foo", "4", "1", "1", c.quantity}, kStart + c.at), c.want) << "case " << i;
    ++i;
  }
}

// 30 per 60 s, burst 15: T = 2 s, DVT = 32 s, limit 16.
TEST_F(Throttle, BurstsThenSpacesRequests) {
  EXPECT_EQ(call({"k", "15", "30", "60"}, kStart), (ThrottleReply{0, 16, 15, -1, 2}));
  for (int i = 1; i < 16; ++i) call({"k", "15", "30", "60"}, kStart);
  // The 17th at the same instant waits one interval; the bucket resets in 32 s.
  EXPECT_EQ(call({"k", "15", "30", "60"}, kStart), (ThrottleReply{1, 16, 0, 2, 32}));
  // 1.5 s later: still 0.5 s early, sent as 1 s.
  EXPECT_EQ(call({"k", "15", "30", "60"}, kStart + 1500 * kMs), (ThrottleReply{1, 16, 0, 1, 31}));
  // At exactly 2 s the request conforms (redis-cell's diff < 0 is strict).
  EXPECT_EQ(call({"k", "15", "30", "60"}, kStart + 2 * kSec), (ThrottleReply{0, 16, 0, -1, 32}));
}

// 3 per second: T = trunc(1e9 / 3) = 333333333 ns; times under a second are sent as 1.
TEST_F(Throttle, RoundsFractionsOfASecondUp) {
  EXPECT_EQ(call({"r", "0", "3", "1"}, kStart), (ThrottleReply{0, 1, 0, -1, 1}));
  EXPECT_EQ(call({"r", "0", "3", "1"}, kStart), (ThrottleReply{1, 1, 0, 1, 1}));
  // 333333333 ns later the TAT is reached: allowed again.
  EXPECT_EQ(call({"r", "0", "3", "1"}, kStart + 333333333), (ThrottleReply{0, 1, 0, -1, 1}));
}

TEST_F(Throttle, KeysAreIndependentAndParametersComeWithEachCall) {
  EXPECT_EQ(call({"a", "0", "1", "10"}, kStart).limited, 0);
  EXPECT_EQ(call({"a", "0", "1", "10"}, kStart).limited, 1);
  EXPECT_EQ(call({"b", "0", "1", "10"}, kStart).limited, 0);
  // Same key, a bigger burst now: the stored TAT (now + 10 s) fits a tolerance of 20 s.
  EXPECT_EQ(call({"a", "1", "1", "10"}, kStart), (ThrottleReply{0, 2, 0, -1, 20}));
}

TEST(CellSeconds, CeilsAtMillisecondResolution) {
  EXPECT_EQ(cell_seconds(0), 0);
  EXPECT_EQ(cell_seconds(400 * core::kNanosPerMicro), 0);  // 0.0004 s: no millisecond part
  EXPECT_EQ(cell_seconds(kSec + 400'000), 1);              // 1.0004 s
  EXPECT_EQ(cell_seconds(kSec + kMs), 2);                  // 1.001 s
  EXPECT_EQ(cell_seconds(1999 * kMs), 2);
  EXPECT_EQ(cell_seconds(-kSec), -1);
}

TEST_F(Throttle, RefusesBadArgumentsWithRedisCellsMessages) {
  EXPECT_EQ(error({"k", "x", "1", "1"}), "Cell error: Couldn't parse as integer: x");
  EXPECT_EQ(error({"k", "1", "1.5", "1"}), "Cell error: Couldn't parse as integer: 1.5");
  EXPECT_EQ(error({"k", "1", "1", "1", ""}), "Cell error: Couldn't parse as integer: ");
  EXPECT_EQ(error({"k", "1", "1", "99999999999999999999"}),
            "Cell error: Couldn't parse as integer: 99999999999999999999");
  EXPECT_EQ(error({"k", "1", "0", "1"}), "Cell error: Zero rates are not supported");
  EXPECT_EQ(error({"k", "1", "1", "0"}), "Cell error: Zero rates are not supported");
  // More per second than nanoseconds: the interval truncates to zero.
  EXPECT_EQ(error({"k", "1", "2000000000", "1"}), "Cell error: Zero rates are not supported");
  EXPECT_EQ(error({"k", "+1", "1", "1"}), "");  // Rust's i64 parser takes a '+'
}

TEST_F(Throttle, RefusesWhatRedisCellLeavesUnchecked) {
  EXPECT_EQ(error({"k", "-1", "1", "1"}), "ERR invalid max_burst -1: must be 0 or more");
  EXPECT_EQ(error({"k", "1", "-1", "1"}), "ERR invalid count -1: must be positive");
  EXPECT_EQ(error({"k", "1", "1", "-1"}), "ERR invalid period -1: must be positive");
  EXPECT_EQ(error({"k", "1", "1", "1", "-1"}), "ERR invalid quantity -1: must be 0 or more");
  EXPECT_EQ(error({"k", "1", "1", "9223372036854775807"}),
            "ERR invalid period 9223372036854775807: too large (at most 9223372036 seconds)");
  EXPECT_EQ(error({"k", "9223372036854775806", "1", "1"}),
            "ERR max_burst 9223372036854775806 too large for this rate: the burst would last "
            "over 292 years");
  // An absurd quantity is above the limit: limited, retry -1 (never), as redis-cell says.
  EXPECT_EQ(call({"k", "1", "1", "1", "9223372036854775807"}, kStart),
            (ThrottleReply{1, 2, 2, -1, 0}));
}

}  // namespace
}  // namespace sluice::server::resp
