// The server log's two line formats (sluice/log/log.hpp), at a fixed time: what an operator
// greps (text) and what a collector parses (JSON).
#include "sluice/log/log.hpp"

#include <gtest/gtest.h>

namespace sluice::log {
namespace {

// 2026-12-02T03:00:00.123Z
constexpr std::int64_t kAt = 1796180400123;

TEST(ServerLogText, TimeLevelPaddedToFiveMessageThenKeyValues) {
  EXPECT_EQ(format_line(Format::kText, kAt, Level::kInfo, "sluice serve: started",
                        {{"rules", std::int64_t{2}}, {"storage", "local"}}),
            "2026-12-02T03:00:00.123Z info  sluice serve: started rules=2 storage=local");
  EXPECT_EQ(format_line(Format::kText, kAt, Level::kError, "x", {}),
            "2026-12-02T03:00:00.123Z error x");
}

TEST(ServerLogText, QuotesAValueWithASpaceAndPutsListsOnTheirOwnLines) {
  EXPECT_EQ(
      format_line(Format::kText, kAt, Level::kWarn, "refused",
                  {{"why", "a b"}, {"errors", std::vector<std::string>{"f:2: bad", "f:3: x"}}}),
      "2026-12-02T03:00:00.123Z warn  refused why=\"a b\"\nf:2: bad\nf:3: x");
}

TEST(ServerLogJson, OneObjectWithTimeLevelMsgAndTheFields) {
  EXPECT_EQ(format_line(Format::kJson, kAt, Level::kWarn, "say \"hi\"",
                        {{"generation", std::int64_t{7}},
                         {"errors", std::vector<std::string>{"f:2: bad"}}}),
            "{\"time\":\"2026-12-02T03:00:00.123Z\",\"level\":\"warn\",\"msg\":\"say \\\"hi\\\"\","
            "\"generation\":7,\"errors\":[\"f:2: bad\"]}");
}

TEST(ServerLogLevels, ParseTheFiveNamesAndRefuseOthers) {
  EXPECT_EQ(parse_level("warn"), Level::kWarn);
  EXPECT_EQ(parse_level("trace"), Level::kTrace);
  EXPECT_FALSE(parse_level("warning"));
  EXPECT_FALSE(parse_format("xml"));
  EXPECT_EQ(parse_format("json"), Format::kJson);
}

}  // namespace
}  // namespace sluice::log
