// StatsHistory: the dashboard's per-second ring (docs/dashboard.md, "Memory").
#include "stats_history.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::server {
namespace {

SeriesTotal rule(const std::string& name, std::uint64_t allowed, std::uint64_t denied = 0) {
  return SeriesTotal{SeriesKind::kRule, name, OutcomeCounts{allowed, denied, 0, 0}};
}

TEST(StatsHistory, EachSecondHoldsWhatTheCountersMovedSinceTheSampleBefore) {
  StatsHistory h;
  h.sample(1000, {rule("api", 100, 7)});  // the baseline: nothing drawn for it
  h.sample(1001, {rule("api", 105, 9)});
  h.sample(1002, {rule("api", 105, 9)});
  h.sample(1004, {rule("api", 125, 9)});  // a second missed: it reads 0
  const auto w = h.since(0);
  EXPECT_EQ(w.first, 1001);
  EXPECT_EQ(w.last, 1004);
  ASSERT_EQ(w.series.size(), 1u);
  const auto& p = w.series[0].points;
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].allowed, 5u);
  EXPECT_EQ(p[0].denied, 2u);
  EXPECT_EQ(p[1].allowed, 0u);
  EXPECT_EQ(p[2].allowed, 0u);
  EXPECT_EQ(p[3].allowed, 20u);
  EXPECT_EQ(h.since(1003).series[0].points.size(), 1u);  // only what came after `since`
}

TEST(StatsHistory, KeepsTheLast900SecondsOnly) {
  StatsHistory h;
  for (std::uint64_t s = 0; s <= 2000; ++s)
    h.sample(10000 + static_cast<std::int64_t>(s), {rule("api", s)});
  const auto w = h.since(0);
  EXPECT_EQ(w.series[0].points.size(), StatsHistory::kPoints);
  EXPECT_EQ(w.first, 12000 - 899);
  EXPECT_EQ(w.series[0].points.back().allowed, 1u);
}

TEST(StatsHistory, PastTheCapRulesShareTheOtherRowAndMemoryStaysBounded) {
  StatsHistory h;
  std::vector<SeriesTotal> zero, some;
  for (int i = 0; i < 1000; ++i) {
    zero.push_back(rule("r" + std::to_string(i), 0));
    some.push_back(rule("r" + std::to_string(i), 1));
  }
  h.sample(1, zero);
  h.sample(2, some);
  const auto w = h.since(0);
  // 128 rules and "(other)", 14,400 bytes each, whatever the number of rules.
  EXPECT_EQ(w.series.size(), StatsHistory::kMaxRules + 1);
  EXPECT_EQ(h.memory_bytes(), (StatsHistory::kMaxRules + 1) * 14400u);
  EXPECT_LE(h.memory_bytes(), StatsHistory::kMaxBytes);
  for (const auto& s : w.series) {
    if (s.name == StatsHistory::kOther) {
      EXPECT_EQ(s.points[0].allowed, 1000u - StatsHistory::kMaxRules);
    }
  }
}

TEST(StatsHistory, ARuleMadeAgainCountsFromZeroAndAGoneOneIsDroppedAfterTheWindow) {
  StatsHistory h;
  h.sample(1, {rule("api", 50)});
  h.sample(2, {rule("api", 60)});
  h.sample(3, {rule("api", 4)});  // counters made anew: 4 since the last sample
  EXPECT_EQ(h.since(0).series[0].points.back().allowed, 4u);
  h.sample(4, {});  // the rule is gone; its history stays while it is in the window
  EXPECT_EQ(h.since(0).series.size(), 1u);
  h.sample(4 + StatsHistory::kPoints, {});
  EXPECT_EQ(h.since(0).series.size(), 0u);
  EXPECT_EQ(h.memory_bytes(), 0u);
}

}  // namespace
}  // namespace sluice::server
