// Settling a cost after the response, by hand-checkable numbers: the stated cost parsed and
// capped, the difference from the reserve charged into debt or refunded, and count_if's statuses.
#include "sluice/core/settle.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sluice/core/status_set.hpp"
#include "support/units.hpp"

namespace sluice::core {
namespace {

using namespace test::units;

TEST(Settle, AStatedCostIsADecimalIntegerCappedAtTheMaximum) {
  EXPECT_EQ(parse_stated_cost("5"), 5);
  EXPECT_EQ(parse_stated_cost(" 7\t"), 7);
  EXPECT_EQ(parse_stated_cost("0"), 0);
  EXPECT_EQ(parse_stated_cost("99999999"), kMaxStatedCost);
  EXPECT_FALSE(parse_stated_cost(""));
  EXPECT_FALSE(parse_stated_cost("-3"));
  EXPECT_FALSE(parse_stated_cost("5x"));
  EXPECT_FALSE(parse_stated_cost("1.5"));
  EXPECT_FALSE(parse_stated_cost("9999999999999999999999"));  // would overflow: malformed
}

TEST(Settle, TheDeltaIsTheStatedCostLessTheReserve) {
  EXPECT_EQ(settle_delta(0, 5), 5);
  EXPECT_EQ(settle_delta(3, 5), 2);
  EXPECT_EQ(settle_delta(5, 2), -3);
  EXPECT_EQ(settle_delta(0, 2 * kMaxStatedCost), kMaxStatedCost);
}

TEST(Settle, ACostOf5DrainsAFixedWindowOf10InTwoRequests) {
  const FixedWindow::Params p{10, sec(1)};
  FixedWindow::State s{0, 0};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(FixedWindow::decide(p, s, ms(10), 0, 0).decision.allowed);  // the pre-check
    s = Settle<FixedWindow>::apply(p, s, ms(10), settle_delta(0, 5));
  }
  EXPECT_EQ(s.count, 10);
  EXPECT_FALSE(FixedWindow::decide(p, s, ms(20), 1, 0).decision.allowed);
  EXPECT_TRUE(FixedWindow::decide(p, s, sec(1), 1, 0).decision.allowed);
}

TEST(Settle, AFixedWindowRefundsTheUnusedReserveWithinItsWindowOnly) {
  const FixedWindow::Params p{10, sec(1)};
  FixedWindow::State s{0, 8};  // reserve 5 taken, 3 before
  EXPECT_EQ(Settle<FixedWindow>::apply(p, s, ms(10), -4).count, 4);
  EXPECT_EQ(Settle<FixedWindow>::apply(p, s, ms(10), -100).count, 0);
  EXPECT_EQ(Settle<FixedWindow>::apply(p, s, sec(1), -4).count, 8);  // the window ended
}

TEST(Settle, AGcraGoesIntoDebtAndARefundBringsTheTatBackNoEarlierThanNow) {
  const auto p = Gcra::make(Rate{1, sec(1)}, 9);  // 1 a second, burst 10: tolerance 10 s
  Gcra::State s = Gcra::start(p, 0);
  s = Settle<Gcra>::apply(p, s, 0, 15);  // TAT 15 s: 5 s beyond the tolerance
  EXPECT_EQ(s.tat, sec(15));
  EXPECT_EQ(Gcra::decide(p, s, 0, 1, 0).decision.retry_after, sec(6));
  s = Settle<Gcra>::apply(p, s, 0, -3);
  EXPECT_EQ(s.tat, sec(12));
  s = Settle<Gcra>::apply(p, s, 0, -100);
  EXPECT_EQ(s.tat, 0);
}

TEST(Settle, ATokenBucketGoesBelowZeroAndARefundFillsItToItsBurstAtMost) {
  const auto p = TokenBucket::make(Rate{10, sec(1)}, 10);
  TokenBucket::State s{10, 0};
  s = Settle<TokenBucket>::apply(p, s, 0, 14);
  EXPECT_DOUBLE_EQ(s.tokens, -4);
  // 5 tokens (0.5 s at 10/s) until one request may pass: the debt is paid first.
  EXPECT_EQ(TokenBucket::decide(p, s, 0, 1, 0).decision.retry_after, ms(500));
  s = Settle<TokenBucket>::apply(p, s, 0, -6);
  EXPECT_DOUBLE_EQ(s.tokens, 2);
  s = Settle<TokenBucket>::apply(p, s, 0, -100);
  EXPECT_DOUBLE_EQ(s.tokens, 10);
}

TEST(StatusEntries, ListStatusesAndClasses) {
  const std::vector<std::string> none, listed{"401", "5xx"};
  EXPECT_FALSE(status_listed(none, 401));
  ASSERT_TRUE(is_status_entry("401"));
  ASSERT_TRUE(is_status_entry("5xx"));
  EXPECT_TRUE(status_listed(listed, 401));
  EXPECT_FALSE(status_listed(listed, 403));
  EXPECT_FALSE(status_listed(listed, 200));
  EXPECT_TRUE(status_listed(listed, 500));
  EXPECT_TRUE(status_listed(listed, 599));
  EXPECT_FALSE(status_listed(listed, 600));
  EXPECT_FALSE(is_status_entry("6xx"));
  EXPECT_FALSE(is_status_entry("40"));
  EXPECT_FALSE(is_status_entry("4x1"));
}

}  // namespace
}  // namespace sluice::core
