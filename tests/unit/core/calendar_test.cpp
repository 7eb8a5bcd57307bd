// Calendar windows from an offset table written out by hand: Europe/Berlin from the autumn of
// 2025 to the spring of 2027 (CET +1 h, CEST +2 h from 2026-03-29 01:00 UTC to 2026-10-25
// 01:00 UTC), and UTC. The Unix times below are local midnights, checked with Python's zoneinfo.
#include "sluice/core/calendar.hpp"

#include <gtest/gtest.h>

#include "sluice/core/fixed_window.hpp"
#include "support/limiter.hpp"

namespace sluice::core {
namespace {

constexpr Nanos kSec = kNanosPerSecond;
constexpr std::int64_t kHour = 3600;

std::vector<ZoneOffset> berlin() {
  return {{-(INT64_C(1) << 40), 7200},
          {1761440400, 3600},   // 2025-10-26 01:00 UTC: CET
          {1774746000, 7200},   // 2026-03-29 01:00 UTC: CEST (02:00 -> 03:00 local)
          {1792890000, 3600},   // 2026-10-25 01:00 UTC: CET (03:00 -> 02:00 local)
          {1806195600, 7200}};  // 2027-03-28 01:00 UTC
}

// Local midnights in Berlin, Unix seconds.
constexpr std::int64_t kJan31 = 1769814000;
constexpr std::int64_t kFeb1 = 1769900400;
constexpr std::int64_t kMar1 = 1772319600;
constexpr std::int64_t kMar23 = 1774220400;  // a Monday
constexpr std::int64_t kMar29 = 1774738800;  // the 23-hour day
constexpr std::int64_t kMar30 = 1774821600;  // a Monday
constexpr std::int64_t kOct25 = 1792879200;  // the 25-hour day
constexpr std::int64_t kOct26 = 1792969200;

TEST(Calendar, ADayInBerlinRunsFromLocalMidnightToLocalMidnightAcrossAMonthEnd) {
  const Calendar day(CalendarUnit::kDay, berlin());
  const CalendarWindow jan31 = day.window_at((kJan31 + 23 * kHour + 3599) * kSec);  // 23:59:59
  EXPECT_EQ(jan31.start, kJan31 * kSec);
  EXPECT_EQ(jan31.end, kFeb1 * kSec);
  const CalendarWindow feb1 = day.window_at(kFeb1 * kSec);
  EXPECT_EQ(feb1.index, jan31.index + 1);
  EXPECT_EQ(feb1.start, kFeb1 * kSec);
}

TEST(Calendar, TheDayTheClocksGoForwardIs23HoursAndTheDayTheyGoBackIs25) {
  const Calendar day(CalendarUnit::kDay, berlin());
  const CalendarWindow spring = day.window_at((kMar29 + 12 * kHour) * kSec);
  EXPECT_EQ(spring.start, kMar29 * kSec);
  EXPECT_EQ(spring.end - spring.start, 23 * kHour * kSec);
  const CalendarWindow autumn = day.window_at((kOct25 + 2 * kHour + 1800) * kSec);
  EXPECT_EQ(autumn.start, kOct25 * kSec);
  EXPECT_EQ(autumn.end, kOct26 * kSec);
  EXPECT_EQ(autumn.end - autumn.start, 25 * kHour * kSec);
}

TEST(Calendar, WeeksStartOnMondayAtLocalMidnightAndTheDstWeekIs167Hours) {
  const Calendar week(CalendarUnit::kWeek, berlin());
  const CalendarWindow w = week.window_at((kMar23 + 2 * 86400 + 10 * kHour) * kSec);  // Wed
  EXPECT_EQ(w.start, kMar23 * kSec);
  EXPECT_EQ(w.end, kMar30 * kSec);
  EXPECT_EQ(w.end - w.start, 167 * kHour * kSec);
  // Sunday 23:59:59 is still that week; Monday 00:00 is the next.
  EXPECT_EQ(week.window_at((kMar30 - 1) * kSec).index, w.index);
  EXPECT_EQ(week.window_at(kMar30 * kSec).index, w.index + 1);
}

TEST(Calendar, AMonthRunsFromTheFirstToTheFirstOfTheNext) {
  const Calendar month(CalendarUnit::kMonth, berlin());
  const CalendarWindow feb = month.window_at((kFeb1 + 14 * 86400) * kSec);
  EXPECT_EQ(feb.start, kFeb1 * kSec);
  EXPECT_EQ(feb.end, kMar1 * kSec);
  EXPECT_EQ(month.window_at((kFeb1 - 1) * kSec).end, kFeb1 * kSec);  // Jan 31 23:59:59
}

TEST(Calendar, FebruaryOfALeapYearHas29DaysAndItsLastDayEndsAtMarchFirst) {
  const Calendar month(CalendarUnit::kMonth, {{0, 0}});
  const Calendar day(CalendarUnit::kDay, {{0, 0}});
  constexpr std::int64_t kFeb1of2028 = 1832976000;  // UTC
  constexpr std::int64_t kFeb29of2028 = kFeb1of2028 + 28 * 86400;
  const CalendarWindow feb = month.window_at(kFeb29of2028 * kSec);
  EXPECT_EQ(feb.start, kFeb1of2028 * kSec);
  EXPECT_EQ(feb.end - feb.start, 29 * 86400 * kSec);
  const CalendarWindow feb28 = day.window_at((kFeb29of2028 - 1) * kSec);
  EXPECT_EQ(feb28.end, kFeb29of2028 * kSec);
  EXPECT_EQ(day.window_at(kFeb29of2028 * kSec).end, (kFeb29of2028 + 86400) * kSec);
}

TEST(Calendar, AMidnightTheClocksSkipStartsTheDayAtTheFirstInstantAfterTheGap) {
  // At 00:00 local (UTC+0) the clocks jump to 01:00 (UTC+1): local midnight never happens.
  constexpr std::int64_t kJump = 1769904000;  // 2026-02-01 00:00 UTC
  const Calendar day(CalendarUnit::kDay, {{0, 0}, {kJump, 3600}});
  const CalendarWindow before = day.window_at((kJump - 1) * kSec);
  EXPECT_EQ(before.end, kJump * kSec);
  const CalendarWindow after = day.window_at(kJump * kSec);
  EXPECT_EQ(after.index, before.index + 1);
  EXPECT_EQ(after.start, kJump * kSec);
  EXPECT_EQ(after.end - after.start, 23 * kHour * kSec);
}

using Daily = test::TestLimiter<FixedWindow>;

TEST(CalendarFixedWindow, ThreeADayRefusesTheFourthUntilLocalMidnightThenCountsAfresh) {
  static const Calendar day(CalendarUnit::kDay, berlin());
  Daily w(FixedWindow::Params{3, 24 * kHour * kSec, &day});
  const Nanos evening = (kFeb1 - 60) * kSec;  // Jan 31, 23:59 in Berlin
  EXPECT_EQ(w.allowed_of(3, evening), 3);
  const Decision fourth = w.at(evening);
  EXPECT_FALSE(fourth.allowed);
  EXPECT_EQ(fourth.retry_after, 60 * kSec);
  EXPECT_EQ(fourth.reset_after, 60 * kSec);
  const Decision next = w.at(kFeb1 * kSec);
  EXPECT_TRUE(next.allowed);
  EXPECT_EQ(next.remaining, 2);
  EXPECT_EQ(next.reset_after, 86400 * kSec);
}

TEST(CalendarFixedWindow, OnTheShortDayTheResetIsTheLocalMidnightNot24HoursOn) {
  static const Calendar day(CalendarUnit::kDay, berlin());
  Daily w(FixedWindow::Params{1, 24 * kHour * kSec, &day});
  const Decision first = w.at(kMar29 * kSec);  // 00:00 on the 23-hour day
  EXPECT_TRUE(first.allowed);
  EXPECT_EQ(first.reset_after, 23 * kHour * kSec);
  const Decision second = w.at((kMar29 + 22 * kHour) * kSec);  // 23:00 CEST
  EXPECT_FALSE(second.allowed);
  EXPECT_EQ(second.retry_after, kHour * kSec);
}

}  // namespace
}  // namespace sluice::core
