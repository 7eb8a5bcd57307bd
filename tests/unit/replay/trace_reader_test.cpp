// Reading replay traces (`t_us,key[,cost]` lines): what is accepted, what is skipped, and an
// error naming the physical line for everything else.
#include "sluice/replay/trace_reader.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace sluice::replay {
namespace {

// A trace held in memory, read through the same FILE* interface as stdin.
class Trace {
 public:
  explicit Trace(std::string text)
      : text_(std::move(text)),
        file_(fmemopen(text_.empty() ? nullptr : text_.data(), text_.size(), "r"), &std::fclose),
        reader_(file_.get()) {}

  // Every request until the end or an error, as "t_us|key|cost|line".
  std::vector<std::string> requests() {
    std::vector<std::string> out;
    while (auto r = reader_.next()) {
      out.push_back(std::to_string(r->t_us) + "|" + std::string(r->key) + "|" +
                    std::to_string(r->cost) + "|" + std::to_string(r->line));
    }
    return out;
  }
  const std::string& error() const { return reader_.error(); }
  TraceReader& reader() { return reader_; }

 private:
  std::string text_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  TraceReader reader_;
};

// The error a trace ends with (after reading every request before it).
std::string error_of(std::string text) {
  Trace t(std::move(text));
  t.requests();
  EXPECT_FALSE(t.error().empty());
  return t.error();
}

TEST(TraceReader, ReadsTimeKeyAndOptionalCost) {
  Trace t("0,alice,3\n5,bob\n5,alice,1\n");
  EXPECT_EQ(t.requests(), (std::vector<std::string>{"0|alice|3|1", "5|bob|1|2", "5|alice|1|3"}));
  EXPECT_EQ(t.error(), "");
}

TEST(TraceReader, EchoesTheFieldsAsWritten) {
  Trace t("0007,k,02\n8,k\n");
  auto first = t.reader().next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->t_text, "0007");
  EXPECT_EQ(first->t_us, 7);
  EXPECT_EQ(first->cost_text, "02");
  EXPECT_EQ(first->cost, 2);
  auto second = t.reader().next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->cost_text, "");  // no cost column
  EXPECT_EQ(second->cost, 1);
}

TEST(TraceReader, SkipsCommentsAndBlankLinesButCountsThemAsLines) {
  Trace t("# t_us,key,cost\n\n   \n\t\n1,a\n# done\n2,a\n");
  EXPECT_EQ(t.requests(), (std::vector<std::string>{"1|a|1|5", "2|a|1|7"}));
  EXPECT_EQ(t.error(), "");
}

TEST(TraceReader, StripsTheCarriageReturnOfCrlfLines) {
  Trace t("# comment\r\n\r\n1,a,2\r\n2,b\r\n");
  EXPECT_EQ(t.requests(), (std::vector<std::string>{"1|a|2|3", "2|b|1|4"}));
  EXPECT_EQ(t.error(), "");
}

TEST(TraceReader, ReadsALastLineWithoutANewline) {
  Trace t("1,a\n2,b,4");
  EXPECT_EQ(t.requests(), (std::vector<std::string>{"1|a|1|1", "2|b|4|2"}));
  EXPECT_EQ(t.error(), "");
}

TEST(TraceReader, AnEmptyTraceHasNoRequestsAndNoError) {
  Trace t("");
  EXPECT_TRUE(t.requests().empty());
  EXPECT_EQ(t.error(), "");
}

TEST(TraceReader, TakesTheKeyAsWrittenWithoutTrimming) {
  Trace t("1, a b ,2\n2,\xff\x01key\n");
  auto r = t.reader().next();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->key, " a b ");
  r = t.reader().next();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->key, "\xff\x01key");
}

TEST(TraceReader, AcceptsEqualTimesAndRefusesDecreasingOnes) {
  EXPECT_EQ(error_of("5,a\n5,a\n# x\n4,a\n"),
            "line 4: time 4 is earlier than the previous request's 5 (times must not decrease)");
}

TEST(TraceReader, ErrorsNameTheLineAndTheProblem) {
  EXPECT_EQ(error_of("1,a\n2\n"), "line 2: expected t_us,key[,cost], found no comma");
  EXPECT_EQ(error_of("1,\n"), "line 1: empty key");
  EXPECT_EQ(error_of("1,,3\n"), "line 1: empty key");
  EXPECT_EQ(error_of(",a\n"), "line 1: missing time (t_us)");
  EXPECT_EQ(error_of("1,a,0\n"), "line 1: cost 0: a cost must be a positive integer");
  EXPECT_EQ(error_of("1,a,\n"), "line 1: missing cost after the second comma");
  EXPECT_EQ(error_of("1,a,1,2\n"),
            "line 1: too many fields (expected t_us,key[,cost]; a key has no comma)");
}

TEST(TraceReader, NumbersArePlainDecimal) {
  for (const char* line : {"-1,a", "+1,a", "1.0,a", "1e3,a", " 1,a", "0x1,a"}) {
    EXPECT_NE(error_of(line).find("is not a plain non-negative integer"), std::string::npos)
        << line;
  }
  for (const char* line : {"1,a,-1", "1,a,+1", "1,a,1 ", "1,a,1.5"}) {
    EXPECT_NE(error_of(line).find("cost '"), std::string::npos) << line;
  }
}

TEST(TraceReader, RefusesTimesBeyondWhatNanosecondsCanHold) {
  // int64 max / 1000 = 9223372036854775 us is the last instant; one more is refused.
  Trace last("9223372036854775,a\n");
  EXPECT_EQ(last.requests(), (std::vector<std::string>{"9223372036854775|a|1|1"}));
  EXPECT_NE(error_of("9223372036854776,a\n").find("line 1: time '9223372036854776' is beyond"),
            std::string::npos);
  EXPECT_NE(error_of("99999999999999999999,a\n").find("out of range"), std::string::npos);
  EXPECT_NE(error_of("1,a,99999999999999999999\n").find("out of range"), std::string::npos);
}

TEST(TraceReader, ReadsManyLinesAcrossItsBufferBoundaries) {
  std::string text;
  for (int i = 0; i < 100'000; ++i)
    text += std::to_string(i) + ",key" + std::to_string(i % 7) + "\n";
  Trace t(text);
  const auto all = t.requests();
  EXPECT_EQ(t.error(), "");
  ASSERT_EQ(all.size(), 100'000u);
  EXPECT_EQ(all.back(), "99999|key4|1|100000");  // 99999 % 7 = 4
}

TEST(TraceReader, AcceptsALineOfOneMebibyteAndRefusesALongerOne) {
  const std::size_t cap = TraceReader::kMaxLineBytes;  // 1 MiB
  const std::string prefix = "1,";
  Trace at_cap("0,a\n" + prefix + std::string(cap - prefix.size(), 'k') + "\n2,b\n");
  EXPECT_EQ(at_cap.requests().size(), 3u);
  EXPECT_EQ(at_cap.error(), "");

  const std::string over = prefix + std::string(cap - prefix.size() + 1, 'k');
  EXPECT_EQ(error_of("0,a\n" + over + "\n2,b\n"), "line 2: longer than 1048576 bytes");
  EXPECT_EQ(error_of("0,a\n" + over), "line 2: longer than 1048576 bytes");  // no newline
  EXPECT_EQ(error_of("0,a\n" + prefix + std::string(3 * cap / 2, 'k') + "\n"),
            "line 2: longer than 1048576 bytes");
}

TEST(ParseTraceLine, ParsesOneLineWithoutALinePrefix) {
  auto r = parse_trace_line("12,k,3");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->t_us, 12);
  EXPECT_EQ(r->key, "k");
  EXPECT_EQ(r->cost, 3);
  EXPECT_EQ(parse_trace_line("12,k,0").error(), "cost 0: a cost must be a positive integer");
}

}  // namespace
}  // namespace sluice::replay
