// The client's RESP reading and writing: replies however they are split across reads, the
// script's answers read compactly as plain integers, malformed streams refused; commands and
// batches written straight into one buffer read back as the arguments they were.
#include "client/reply_reader.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "client/command_encoding.hpp"
#include "sluice/backend/redis/script_codec.hpp"

namespace sluice::backend::redis {
namespace {

using detail::ReplyReader;

// Every reply in `wire`, fed `step` bytes at a time.
std::vector<Reply> read_all(std::string_view wire, std::size_t step, bool compact) {
  ReplyReader r;
  std::vector<Reply> out;
  for (std::size_t at = 0; at < wire.size(); at += step) {
    r.feed(wire.data() + at, std::min(step, wire.size() - at));
    Reply reply;
    ReplyReader::Status s;
    while ((s = r.next(reply, compact)) == ReplyReader::Status::kReply) out.push_back(reply);
    EXPECT_NE(s, ReplyReader::Status::kError) << r.error();
  }
  return out;
}

TEST(ReplyReader, TheScriptsAnswersComeBackAsIntegersHoweverTheyAreSplit) {
  const std::string wire = "*4\r\n:1\r\n:-1\r\n:9223372036854775807\r\n:-9223372036854775808\r\n";
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    const auto replies = read_all(wire, step, true);
    ASSERT_EQ(replies.size(), 1u) << step;
    EXPECT_EQ(replies[0].type, Reply::Type::kArray);
    EXPECT_TRUE(replies[0].elements.empty());
    EXPECT_EQ(replies[0].integers, (std::vector<long long>{1, -1, LLONG_MAX, LLONG_MIN})) << step;
  }
}

TEST(ReplyReader, OtherCommandsReadTheSameArrayAsElements) {
  const auto replies = read_all("*2\r\n:7\r\n:8\r\n", 3, false);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_TRUE(replies[0].integers.empty());
  ASSERT_EQ(replies[0].elements.size(), 2u);
  EXPECT_EQ(replies[0].elements[1].type, Reply::Type::kInteger);
  EXPECT_EQ(replies[0].elements[1].integer, 8);
}

TEST(ReplyReader, ACompactReadOfAMixedArrayKeepsEveryElementInOrder) {
  // A subscription's confirmation: strings and a count.
  for (std::size_t step = 1; step < 12; ++step) {
    const auto replies = read_all("*3\r\n:1\r\n$9\r\nsubscribe\r\n:2\r\n", step, true);
    ASSERT_EQ(replies.size(), 1u);
    const Reply& r = replies[0];
    EXPECT_TRUE(r.integers.empty());
    ASSERT_EQ(r.elements.size(), 3u);
    EXPECT_EQ(r.elements[0].integer, 1);
    EXPECT_EQ(r.elements[1].str, "subscribe");
    EXPECT_EQ(r.elements[2].integer, 2);
  }
}

TEST(ReplyReader, EveryKindOfReplyAndNestingAsRedisSendsThem) {
  // Status, error, a bulk holding CRLF, nil bulk, nil array, empty array, CLUSTER SLOTS' shape.
  const std::string wire =
      "+OK\r\n-NOSCRIPT No matching script\r\n$4\r\na\r\nb\r\n$-1\r\n*-1\r\n*0\r\n"
      "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:7000\r\n";
  for (const std::size_t step : {std::size_t{1}, std::size_t{7}, wire.size()}) {
    const auto r = read_all(wire, step, true);
    ASSERT_EQ(r.size(), 7u);
    EXPECT_EQ(r[0].type, Reply::Type::kStatus);
    EXPECT_EQ(r[0].str, "OK");
    EXPECT_TRUE(r[1].is_error());
    EXPECT_EQ(r[1].str, "NOSCRIPT No matching script");
    EXPECT_EQ(r[2].str, "a\r\nb");
    EXPECT_EQ(r[3].type, Reply::Type::kNil);
    EXPECT_EQ(r[4].type, Reply::Type::kNil);
    EXPECT_EQ(r[5].type, Reply::Type::kArray);
    ASSERT_EQ(r[6].elements.size(), 1u);
    const Reply& range = r[6].elements[0];
    ASSERT_EQ(range.elements.size(), 3u);
    EXPECT_EQ(range.elements[1].integer, 16383);
    EXPECT_EQ(range.elements[2].elements[0].str, "127.0.0.1");
    EXPECT_EQ(range.elements[2].elements[1].integer, 7000);
  }
}

TEST(ReplyReader, AStreamThatIsNotRespIsRefusedAndStaysRefused) {
  for (const std::string bad :
       {"?x\r\n", ":12a\r\n", "*1\r\n:\r\n", "*2\r\n:1\r\n:99999999999999999999\r\n",
        "$3\r\nabcd\r\n", "*x\r\n"}) {
    for (const bool compact : {false, true}) {
      ReplyReader r;
      r.feed(bad.data(), bad.size());
      Reply reply;
      EXPECT_EQ(r.next(reply, compact), ReplyReader::Status::kError) << bad;
      EXPECT_FALSE(r.error().empty());
      const std::string good = "+OK\r\n";
      r.feed(good.data(), good.size());
      EXPECT_EQ(r.next(reply, compact), ReplyReader::Status::kError) << bad;
    }
  }
}

TEST(CommandEncoding, ArgumentsWrittenInPlaceReadBackAsTheyWere) {
  std::string wire;
  const std::string binary("a\0b\r\n", 5);
  const std::string long_arg(200, 'x');
  detail::append_bulk(wire, "");
  detail::append_bulk(wire, binary);
  detail::append_bulk(wire, long_arg);
  for (const std::int64_t v : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1234567890},
                               std::int64_t{LLONG_MAX}, std::int64_t{LLONG_MIN}}) {
    detail::append_bulk_integer(wire, v);
  }
  EXPECT_EQ(detail::read_bulks(wire),
            (std::vector<std::string>{"", binary, long_arg, "0", "-1", "1234567890",
                                      "9223372036854775807", "-9223372036854775808"}));
}

TEST(ScriptBatch, TheWireIsTheKeysThenTheArgumentsEachOnce) {
  ScriptBatch b(ScriptTime{false, 5'000'000'123});
  ScriptLimit limit{"fixed-window", {"10", "1000000000"}};
  const int l = b.add_limit(limit);
  const int k1 = b.add_key("sluice:{r:a}:fixed-window");
  const int k2 = b.add_key("sluice:{r:b}:fixed-window");
  b.add_request(RequestKind::kDecide, 1, 0, {{l, k1}});
  b.add_request(RequestKind::kDecide, 2, 0, {{l, k2}, {l, k1}});
  const WireArgs w = b.wire();
  std::vector<std::string> want = b.keys();
  for (auto& a : b.args()) want.push_back(a);
  EXPECT_EQ(detail::read_bulks(w.wire), want);
  EXPECT_EQ(w.count, want.size());
  // Reset, the same batch object writes only its new contents.
  b.reset(ScriptTime{});
  EXPECT_EQ(b.key_count(), 0u);
  EXPECT_EQ(detail::read_bulks(b.wire().wire), (std::vector<std::string>{"2", "", "0", "0"}));
}

}  // namespace
}  // namespace sluice::backend::redis
