// LoopHistogram: observations land in the first bucket whose bound holds them, the exposition is
// cumulative, and two loops' histograms of one family sum in the registry.
#include "sluice/metrics/histogram.hpp"

#include <gtest/gtest.h>

namespace sluice::metrics {
namespace {

constexpr Family kTime{"sluice_test_duration_seconds", Kind::kHistogram, "Time."};

TEST(LoopHistogram, BucketsAreCumulativeAndLoopsSum) {
  LoopHistogram loop1, loop2;
  loop1.observe(700);            // 0.7 us: le=1e-06
  loop1.observe(1000);           // exactly 1 us: still le=1e-06 (bounds are inclusive)
  loop2.observe(3'000'000);      // 3 ms: le=0.005
  loop2.observe(-5);             // a clock that stepped back: 0
  loop2.observe(2'000'000'000);  // 2 s: only +Inf
  Registry r;
  auto a = r.add([&](Sink& s) { loop1.collect(s, kTime, {"storage", "local"}); });
  auto b = r.add([&](Sink& s) { loop2.collect(s, kTime, {"storage", "local"}); });
  const auto bucket = [&](std::string_view le) {
    return r.value("sluice_test_duration_seconds_bucket", {{"le", le}});
  };
  EXPECT_EQ(bucket("1e-06"), 3);
  EXPECT_EQ(bucket("0.0025"), 3);
  EXPECT_EQ(bucket("0.005"), 4);
  EXPECT_EQ(bucket("1"), 4);
  EXPECT_EQ(bucket("+Inf"), 5);
  EXPECT_EQ(r.value("sluice_test_duration_seconds_count"), 5);
  EXPECT_DOUBLE_EQ(r.value("sluice_test_duration_seconds_sum"), 2.0030017);
}

TEST(LoopHistogram, WithoutALabelItsSamplesCarryOnlyLe) {
  LoopHistogram h;
  h.observe(50'000);  // 50 us
  Registry r;
  auto a = r.add([&](Sink& s) { h.collect(s, kTime); });
  const std::string text = r.text();
  EXPECT_NE(text.find("sluice_test_duration_seconds_bucket{le=\"5e-05\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("sluice_test_duration_seconds_count 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace sluice::metrics
