// The wire form of a batch for the Redis script: the ARGV layout dispatch.lua reads, the
// parameters as exact decimal text, and the reply read back into decisions folded as the local
// backend folds them.
#include "sluice/backend/redis/script_codec.hpp"

#include <gtest/gtest.h>

#include "redis/spec_parse.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis {
namespace {

using test::parse;

TEST(ScriptLimit, GcraSendsItsParamsFieldsInDeclarationOrder) {
  // gcra:rate=30/60s,burst=15 = CL.THROTTLE key 15 30 60: T = 2 s, DVT = 16 * T.
  const ScriptLimit l = script_limit(parse("gcra:rate=30/60s,burst=15"));
  EXPECT_EQ(l.algorithm, "gcra");
  ASSERT_EQ(l.params.size(), 7u);
  EXPECT_EQ(l.params[0], "30");           // rate.count
  EXPECT_EQ(l.params[1], "60000000000");  // rate.period
  EXPECT_EQ(l.params[2], "15");           // burst
  EXPECT_EQ(l.params[3], "2000000000");   // interval
  EXPECT_EQ(l.params[4], "32000000000");  // tolerance
}

TEST(ScriptLimit, DoublesRoundTripThroughTheirText) {
  // 3/s: x/time/rate keeps 1e9/3 ns per token, not representable in few digits.
  const ScriptLimit l = script_limit(parse("token-bucket:rate=3/s,burst=5"));
  ASSERT_EQ(l.params.size(), 5u);
  EXPECT_EQ(std::stod(l.params[4]), 1e9 / 3.0);
}

TEST(ScriptLimit, LeakyBucketNodelaySentinelGoesAsMinusOne) {
  const ScriptLimit l = script_limit(parse("leaky-bucket:rate=7/s,burst=20,nodelay=1"));
  EXPECT_EQ(l.params.back(), "-1");
}

TEST(ScriptLimit, ConcurrencyCarriesTheLeaseLifetime) {
  const ScriptLimit l = script_limit(parse("concurrency:limit=3"), 60 * core::kNanosPerSecond);
  ASSERT_EQ(l.params.size(), 2u);
  EXPECT_EQ(l.params[1], "60000000000");
}

TEST(ScriptBatch, ArgvIsProtocolTimeLimitsThenRequests) {
  ScriptBatch b(ScriptTime{false, 5 * core::kNanosPerSecond + 250});
  const int limit = b.add_limit(ScriptLimit{"fixed-window", {"3", "1000000000"}});
  const int k1 = b.add_key("sluice:{r:a}:fixed-window");
  const int k2 = b.add_key("sluice:{r:b}:fixed-window");
  EXPECT_EQ(b.add_key("sluice:{r:a}:fixed-window"), k1);  // listed once
  b.add_request(RequestKind::kDecide, 2, 0, {{limit, k1}});
  b.add_request(RequestKind::kTake, 10, core::kForever, {{limit, k2}}, 7 * core::kNanosPerSecond);
  const std::vector<std::string> want = {"2",   "5",
                                         "250",  // protocol, now
                                         "1",   "fixed-window",
                                         "",    "2",
                                         "3",   "1000000000",  // one limit, no flags
                                         "d",   "",
                                         "",    "2",
                                         "0",   "1",
                                         "1",   "1",  // decide cost 2 at the batch's now
                                         "t",   "7",
                                         "0",   "10",
                                         "-1",  "1",
                                         "1",   "2"};  // take 10 at 7 s, forever = -1
  EXPECT_EQ(b.args(), want);
  EXPECT_EQ(b.keys().size(), 2u);
  EXPECT_EQ(b.limits_per_request(), (std::vector<int>{1, 1}));
}

TEST(ScriptBatch, ALimitThatCountsDenialsCarriesFlagD) {
  ScriptBatch b(ScriptTime{});
  ScriptLimit l = script_limit(parse("gcra:rate=1/s,burst=0"));
  l.count_denied = true;
  b.add_limit(l);
  const auto args = b.args();
  ASSERT_GE(args.size(), 7u);
  EXPECT_EQ(args[4], "gcra");
  EXPECT_EQ(args[5], "d");
  EXPECT_EQ(args[6], std::to_string(l.params.size()));
}

TEST(ScriptBatch, ALimitThatBlocksCarriesItsBlockInMillisecondsAfterD) {
  ScriptBatch b(ScriptTime{});
  ScriptLimit l = script_limit(parse("gcra:rate=1/s,burst=0"));
  l.block_ms = 600000;  // on_deny: {block: 10m}
  b.add_limit(l);
  l.count_denied = true;
  b.add_limit(l);
  const auto args = b.args();
  const std::size_t second = 7 + l.params.size();
  ASSERT_GE(args.size(), second + 2);
  EXPECT_EQ(args[5], "b600000");
  EXPECT_EQ(args[second + 1], "db600000");
}

TEST(ScriptBatch, AReserveIsFlagRAfterTheOthersAndASettlementCarriesItsSignedCost) {
  ScriptBatch b(ScriptTime{});
  ScriptLimit l = script_limit(parse("gcra:rate=1/s,burst=9"));
  l.cost = 5;  // reserve: 5
  const int limit = b.add_limit(l);
  l.count_denied = true;
  b.add_limit(l);
  const int key = b.add_key("sluice:{r:a}:gcra");
  b.add_request(RequestKind::kSettle, -3, 0, {{limit, key}});  // 3 of a reserve given back
  const auto args = b.args();
  const std::size_t second = 7 + l.params.size();
  ASSERT_GE(args.size(), second + 2);
  EXPECT_EQ(args[5], "r5");
  EXPECT_EQ(args[second + 1], "dr5");
  const std::vector<std::string> request(args.end() - 8, args.end());
  EXPECT_EQ(request, (std::vector<std::string>{"s", "", "", "-3", "0", "1", "1", "1"}));
}

TEST(ScriptBatch, CalendarBoundsAndTheReplacedParamsFollowTheParamsAsTheFlagsSay) {
  const spec::LimitSpec daily =
      parse("fixed-window:limit=5,window=1d,align=calendar,timezone=Europe/Berlin");
  ScriptLimit l = script_limit(daily);
  // limit, nominal window, then a number naming the zone (a change of zone starts afresh).
  ASSERT_EQ(l.params.size(), 3u);
  EXPECT_EQ(l.params[1], "86400000000000");
  EXPECT_NE(l.params[2], script_limit(parse("fixed-window:limit=5,window=1d,align=calendar,"
                                            "timezone=UTC"))
                             .params[2]);
  l = with_calendar_bounds(l, {1, 2, 3, 4});
  l.proportional = true;
  l.replaced = {"4", "86400000000000", "7"};
  ScriptBatch b(ScriptTime{});
  b.add_limit(l);
  const std::vector<std::string> args = b.args();
  const std::vector<std::string> limit(args.begin() + 4, args.end());
  const std::vector<std::string> want = {
      "fixed-window",   "cp", "3", "5", "86400000000000", l.params[2], "1", "2", "3", "4", "3", "4",
      "86400000000000", "7"};
  EXPECT_EQ(limit, want);
}

TEST(ScriptBatch, AKeyIsListedOnceInALargeBatchToo) {
  // 10,000 keys (an RLS request's descriptors), each added twice: past the scan, by hash.
  ScriptBatch b(ScriptTime{});
  for (int i = 0; i < 10000; ++i) EXPECT_EQ(b.add_key("k" + std::to_string(i)), i + 1);
  int wrong = 0;
  for (int i = 9999; i >= 0; --i) wrong += b.add_key("k" + std::to_string(i)) != i + 1;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(b.keys().size(), 10000u);
  EXPECT_EQ(b.add_key("new"), 10001);
}

TEST(ScriptBatch, RedisTimeLeavesTheInstantEmpty) {
  ScriptBatch b(ScriptTime{});
  const auto args = b.args();
  ASSERT_GE(args.size(), 3u);
  EXPECT_EQ(args[1], "");
}

TEST(DecodeReply, FoldsEachRequestsLimitsAllMustPass) {
  // Request 1: two limits, the second denies (retry 300 ms); request 2: one limit allows.
  const std::vector<long long> flat = {1, 0, 4, 0,         900, 5, 0, 0,  //
                                       0, 0, 0, 300000000, 900, 3, 0, 0,  //
                                       1, 0, 7, 0,         100, 9, 0, 42};
  auto answers = decode_reply_integers(flat, {2, 1});
  ASSERT_TRUE(answers.ok()) << answers.error();
  ASSERT_EQ(answers->size(), 2u);
  const core::Decision& first = (*answers)[0].combined;
  EXPECT_FALSE(first.allowed);
  EXPECT_EQ(first.retry_after, 300000000);
  EXPECT_EQ(first.limit, 3);
  EXPECT_TRUE((*answers)[1].combined.allowed);
  EXPECT_EQ((*answers)[1].combined.remaining, 7);
  EXPECT_EQ((*answers)[1].limits[0].extra, 42);
}

TEST(DecodeReply, MinusOneRetryMeansNever) {
  auto answers = decode_reply_integers({0, 0, 0, -1, 0, 3, 0, 0}, {1});
  ASSERT_TRUE(answers.ok());
  EXPECT_EQ((*answers)[0].combined.retry_after, core::kNever);
}

TEST(DecodeReply, AShortReplyIsAnErrorNotAGuess) {
  auto answers = decode_reply_integers({1, 0, 4}, {1});
  ASSERT_FALSE(answers.ok());
  EXPECT_NE(answers.error().find("3 integers where 8"), std::string::npos) << answers.error();
}

}  // namespace
}  // namespace sluice::backend::redis
