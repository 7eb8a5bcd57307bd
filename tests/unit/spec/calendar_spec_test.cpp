// fixed-window with align=calendar: the spec text, its errors, and the windows the system's tz
// database gives Europe/Berlin (the same midnights as core's hand-written table, Python-checked).
#include <gtest/gtest.h>

#include "sluice/spec/calendar_zones.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::spec {
namespace {

constexpr core::Nanos kSec = core::kNanosPerSecond;

const core::FixedWindow::Params& fixed(const LimitSpec& s) {
  return std::get<core::FixedWindow::Params>(s.params);
}

std::string calendar_error_of(std::string_view text) {
  auto s = parse_limit_spec(text);
  return s ? std::string() : s.error();
}

TEST(CalendarSpec, ADailyQuotaInBerlinResetsAtBerlinMidnightAcrossDstChanges) {
  auto s =
      parse_limit_spec("fixed-window:limit=1000,window=1d,align=calendar,timezone=Europe/Berlin");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->canonical,
            "fixed-window:limit=1000,window=1d,align=calendar,timezone=Europe/Berlin");
  const core::Calendar* c = fixed(*s).calendar;
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(fixed(*s).window, 86400 * kSec);  // the nominal length RateLimit-Policy states
  // 2026-03-29 is 23 hours long there, 2026-10-25 25 hours.
  const auto spring = c->window_at((1774738800 + 3600) * kSec);
  EXPECT_EQ(spring.start, 1774738800 * kSec);
  EXPECT_EQ(spring.end, 1774821600 * kSec);
  const auto autumn = c->window_at((1792879200 + 3600) * kSec);
  EXPECT_EQ(autumn.end - autumn.start, 25 * 3600 * kSec);
}

TEST(CalendarSpec, MonthsAndIsoWeeksComeFromTheSameZoneAndLeapFebruaryHas29Days) {
  auto month =
      parse_limit_spec("fixed-window:limit=5,window=1mo,align=calendar,timezone=Europe/Berlin");
  ASSERT_TRUE(month) << month.error();
  // 2028-02-29 12:00 in Berlin: February 2028 runs from 2028-02-01 00:00 CET, 29 days.
  const auto feb = fixed(*month).calendar->window_at(1835434800 * kSec);
  EXPECT_EQ(feb.start, 1832972400 * kSec);
  EXPECT_EQ(feb.end - feb.start, 29 * 86400 * kSec);
  auto week =
      parse_limit_spec("fixed-window:limit=5,window=1w,align=calendar,timezone=Europe/Berlin");
  ASSERT_TRUE(week) << week.error();
  const auto w = fixed(*week).calendar->window_at(1774393200 * kSec);  // Wed 2026-03-25
  EXPECT_EQ(w.start, 1774220400 * kSec);                               // Mon 2026-03-23
}

TEST(CalendarSpec, TheZoneDefaultsToUtcAndOneCalendarIsSharedPerUnitAndZone) {
  auto utc = parse_limit_spec("fixed-window:limit=1,window=1d,align=calendar");
  ASSERT_TRUE(utc) << utc.error();
  EXPECT_EQ(fixed(*utc).calendar->window_at(1769904000 * kSec + 1).start, 1769904000 * kSec);
  auto again = parse_limit_spec("fixed-window:limit=2,window=1d,align=calendar,timezone=UTC");
  ASSERT_TRUE(again);
  EXPECT_EQ(fixed(*again).calendar, fixed(*utc).calendar);
}

TEST(CalendarSpec, PlainFixedWindowsKeepTheirCanonicalTextAndHaveNoCalendar) {
  auto s = parse_limit_spec("fixed-window:limit=3,window=1m");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->canonical, "fixed-window:limit=3,window=1m");
  EXPECT_EQ(fixed(*s).calendar, nullptr);
  EXPECT_FALSE(calendar_aligned(*s));
}

TEST(CalendarSpec, MistakesAreNamed) {
  EXPECT_NE(calendar_error_of("fixed-window:limit=1,window=1d").find("add align=calendar"),
            std::string::npos);
  EXPECT_NE(calendar_error_of("fixed-window:limit=1,window=5m,align=calendar")
                .find("window must be 1d, 1w (ISO weeks, from Monday) or 1mo, got '5m'"),
            std::string::npos);
  EXPECT_NE(calendar_error_of("fixed-window:limit=1,window=1d,align=calendar,timezone=Mars/Olympus")
                .find("unknown time zone 'Mars/Olympus'"),
            std::string::npos);
  EXPECT_NE(calendar_error_of("fixed-window:limit=1,window=1m,timezone=Europe/Berlin")
                .find("timezone needs align=calendar"),
            std::string::npos);
  EXPECT_NE(
      calendar_error_of("fixed-window:limit=1,window=1m,align=sunrise").find("align must be epoch"),
      std::string::npos);
}

}  // namespace
}  // namespace sluice::spec
