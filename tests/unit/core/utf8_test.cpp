// UTF-8 checks: what RFC 3629 calls well-formed passes, everything else is found at its first
// byte, and printable() shows invalid bytes and control characters as \xHH.
#include "sluice/core/utf8.hpp"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

TEST(Utf8, WellFormedTextOfEveryLengthIsValid) {
  EXPECT_EQ(invalid_utf8_at(""), std::nullopt);
  EXPECT_EQ(invalid_utf8_at("plain ascii"), std::nullopt);
  EXPECT_EQ(invalid_utf8_at("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), std::nullopt);  // é € 😀
  EXPECT_EQ(invalid_utf8_at("\xF4\x8F\xBF\xBF"), std::nullopt);  // U+10FFFF, the last
}

TEST(Utf8, EachMalformedSequenceIsFoundAtItsFirstByte) {
  EXPECT_EQ(invalid_utf8_at("ab\xFF"), 2u);            // never a UTF-8 byte
  EXPECT_EQ(invalid_utf8_at("a\x80"), 1u);             // a continuation byte alone
  EXPECT_EQ(invalid_utf8_at("\xC3"), 0u);              // cut short
  EXPECT_EQ(invalid_utf8_at("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_at("\xE0\x80\xAF"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(invalid_utf8_at("x\xED\xA0\x80"), 1u);     // a UTF-16 surrogate
  EXPECT_EQ(invalid_utf8_at("\xF4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(invalid_utf8_at("\xE2\x82\x41"), 0u);      // a bad third byte
}

TEST(Utf8, TheProblemNamesTheByteAndItsOffset) {
  EXPECT_EQ(invalid_utf8_problem("ab\xFE"), "is not valid UTF-8 (byte 0xFE at offset 2)");
}

TEST(Utf8, PrintableEscapesInvalidBytesAndControlsAndKeepsTheRest) {
  EXPECT_EQ(printable("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(printable("a\xFF\xFE"
                      "b"),
            "a\\xFF\\xFEb");
  EXPECT_EQ(printable("tab\there\n"), "tab\\x09here\\x0A");
  EXPECT_EQ(printable("\xE2\x82"), "\\xE2\\x82");
  EXPECT_EQ(invalid_utf8_at(printable("\xC0\xAF\xED\xA0\x80")), std::nullopt);
}

}  // namespace
}  // namespace sluice::core
