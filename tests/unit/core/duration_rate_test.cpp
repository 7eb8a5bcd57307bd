// Durations and rates as users write them, and the errors for what they get wrong.
#include <gtest/gtest.h>

#include "sluice/core/rate.hpp"
#include "sluice/core/time.hpp"

namespace sluice::core {
namespace {

TEST(Duration, AcceptsEveryDocumentedUnit) {
  EXPECT_EQ(*parse_duration("1500us"), 1'500'000);
  EXPECT_EQ(*parse_duration("250ms"), 250'000'000);
  EXPECT_EQ(*parse_duration("1s"), 1'000'000'000);
  EXPECT_EQ(*parse_duration("2m"), 120'000'000'000);
  EXPECT_EQ(*parse_duration("1h"), 3'600'000'000'000);
  EXPECT_EQ(*parse_duration("0s"), 0);
}

TEST(Duration, ErrorNamesTheTokenAndTheAcceptedUnits) {
  auto bad_unit = parse_duration("5d");
  ASSERT_FALSE(bad_unit);
  EXPECT_NE(bad_unit.error().find("'5d'"), std::string::npos);
  EXPECT_NE(bad_unit.error().find("us, ms, s, m, h"), std::string::npos);
  EXPECT_FALSE(parse_duration("ms"));
  EXPECT_FALSE(parse_duration("-5s"));
  EXPECT_FALSE(parse_duration("1.5s"));
  EXPECT_FALSE(parse_duration("1e3ms"));
  EXPECT_FALSE(parse_duration(""));
}

TEST(Duration, RefusesValuesThatOverflowNanoseconds) {
  auto huge = parse_duration("9999999999h");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().find("too large"), std::string::npos);
}

TEST(Rate, AcceptsUnitsAndDurations) {
  EXPECT_EQ(*parse_rate("10/s"), (Rate{10, kNanosPerSecond}));
  EXPECT_EQ(*parse_rate("600/m"), (Rate{600, kNanosPerMinute}));
  EXPECT_EQ(*parse_rate("5/h"), (Rate{5, kNanosPerHour}));
  EXPECT_EQ(*parse_rate("100/10s"), (Rate{100, 10 * kNanosPerSecond}));
  EXPECT_DOUBLE_EQ(parse_rate("30/m")->per_second(), 0.5);
  EXPECT_DOUBLE_EQ(parse_rate("100/10s")->per_second(), 10.0);
}

TEST(Rate, ErrorsNameTheBadPart) {
  EXPECT_NE(parse_rate("10").error().find("COUNT/PERIOD"), std::string::npos);
  EXPECT_NE(parse_rate("0/s").error().find("at least 1"), std::string::npos);
  EXPECT_NE(parse_rate("10/x").error().find("'x'"), std::string::npos);
  EXPECT_NE(parse_rate("10/0s").error().find("positive"), std::string::npos);
  EXPECT_FALSE(parse_rate("+10/s"));
  EXPECT_FALSE(parse_rate("10/s "));
}

TEST(Rate, FormatsBackToWhatUsersWrite) {
  EXPECT_EQ(format_rate(*parse_rate("10/s")), "10/s");
  EXPECT_EQ(format_rate(*parse_rate("100/10s")), "100/10s");
  EXPECT_EQ(format_rate(*parse_rate("3/250ms")), "3/250ms");
}

TEST(CeilMicros, RoundsDelaysUp) {
  EXPECT_EQ(ceil_micros(0), 0);
  EXPECT_EQ(ceil_micros(1), 1);
  EXPECT_EQ(ceil_micros(1000), 1);
  EXPECT_EQ(ceil_micros(1001), 2);
}

}  // namespace
}  // namespace sluice::core
