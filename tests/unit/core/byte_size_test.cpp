// Byte sizes as configs and flags write them: one parser, one formatter, read back equal.
#include "sluice/core/byte_size.hpp"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

TEST(ParseBytes, AcceptsUnitsAndNamesBadInput) {
  EXPECT_EQ(*parse_bytes("64MiB"), 64u << 20);
  EXPECT_EQ(*parse_bytes("16m"), 16u << 20);
  EXPECT_EQ(*parse_bytes("1g"), 1u << 30);
  EXPECT_EQ(*parse_bytes("4096"), 4096u);
  EXPECT_NE(parse_bytes("12q").error().find("unknown unit"), std::string::npos);
  EXPECT_FALSE(parse_bytes("MiB"));
  EXPECT_FALSE(parse_bytes("99999999999999999999999"));
}

TEST(FormatBytes, WritesTheLargestWholeUnitAndReadsBackEqual) {
  EXPECT_EQ(format_bytes(64u << 20), "64MiB");
  EXPECT_EQ(format_bytes(1u << 30), "1GiB");
  EXPECT_EQ(format_bytes(1536), "1536");
  EXPECT_EQ(format_bytes(3u << 10), "3KiB");
  for (std::size_t n :
       {std::size_t{1}, std::size_t{1024}, std::size_t{5} << 20, std::size_t{1000}}) {
    EXPECT_EQ(*parse_bytes(format_bytes(n)), n);
  }
}

}  // namespace
}  // namespace sluice::core
