// The circllhist bins (two significant digits) and hist_approx_quantile's placement of the
// k-th of n values in a bin at left + k / (n + 1) x width.
#include "sluice/adaptive/log_linear_histogram.hpp"

#include <gtest/gtest.h>

namespace sluice::adaptive {
namespace {

TEST(LogLinearHistogram, BinsHoldTwoSignificantDigits) {
  using H = LogLinearHistogram;
  EXPECT_EQ(H::bin_of(0), 0);
  EXPECT_EQ(H::left(H::bin_of(7)), 7.0);  // [7.0, 7.1)
  EXPECT_EQ(H::width(H::bin_of(7)), 0.1);
  EXPECT_EQ(H::left(H::bin_of(123)), 120.0);  // [120, 130)
  EXPECT_EQ(H::width(H::bin_of(123)), 10.0);
  EXPECT_EQ(H::bin_of(129), H::bin_of(120));
  EXPECT_NE(H::bin_of(130), H::bin_of(129));
  EXPECT_EQ(H::left(H::bin_of(10490)), 10000.0);
  EXPECT_EQ(H::bin_of(INT64_MAX), H::kBins - 1);
}

// 50 samples of 10 ms (10000 us) all sit in [10000, 11000): the median is the 25th of 50,
// placed at 10000 + 25 / 51 x 1000 = 10490.196 us. Envoy's minRTT of a steady 10 ms upstream.
TEST(LogLinearHistogram, TheMedianOfEqualValuesIsPlacedWithinTheirBin) {
  LogLinearHistogram h;
  for (int i = 0; i < 50; ++i) h.insert(10000);
  EXPECT_NEAR(h.quantile(0.5), 10000 + 25.0 / 51 * 1000, 1e-9);
  EXPECT_NEAR(h.quantile(0.0), 10000 + 1.0 / 51 * 1000, 1e-9);  // rank 0 counts as the 1st
  EXPECT_NEAR(h.quantile(1.0), 10000 + 50.0 / 51 * 1000, 1e-9);
}

// Ranks cross bins: 3 values at 2 ms and 1 at 9 ms; p50 is rank 2 of the 2 ms bin
// (2000 + 2 / 4 x 100), p90 is rank 3.6 - 3 -> 1st of the 9 ms bin (9000 + 1 / 2 x 100).
TEST(LogLinearHistogram, AQuantileWalksTheBinsInOrder) {
  LogLinearHistogram h;
  h.insert(9000);
  for (int i = 0; i < 3; ++i) h.insert(2000);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_NEAR(h.quantile(0.5), 2050, 1e-9);
  EXPECT_NEAR(h.quantile(0.9), 9050, 1e-9);
  h.clear();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile(0.5), 0);
}

TEST(LogLinearHistogram, ZeroValuesHaveNoWidth) {
  LogLinearHistogram h;
  h.insert(0);
  h.insert(0);
  h.insert(5000);
  EXPECT_EQ(h.quantile(0.5), 0);
}

}  // namespace
}  // namespace sluice::adaptive
