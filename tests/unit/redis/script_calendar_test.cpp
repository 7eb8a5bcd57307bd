// Calendar windows in the Redis script: the instance names the windows around its own Unix
// time (calendar_bounds), the script counts in the one that holds Redis's clock, so instances
// whose clocks are off by less than a window count in the same day; a day of a DST change is
// 23 or 25 hours and a month ends on the 1st, as the local backend has them.
#include <gtest/gtest.h>

#include "redis/script_runner.hpp"
#include "redis/spec_parse.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis::testing {
namespace {

constexpr core::Nanos kSec = core::kNanosPerSecond;
constexpr core::Nanos kFeb1Berlin = 1769900400 * kSec;      // 2026-02-01 00:00 CET
constexpr core::Nanos kMar29Berlin = 1774738800 * kSec;     // 00:00 CET; 02:00 becomes 03:00
constexpr core::Nanos kOct25Berlin = 1792879200 * kSec;     // 00:00 CEST; 03:00 becomes 02:00
constexpr core::Nanos kMar1Berlin = 1772319600 * kSec;      // 2026-03-01 00:00 CET
const std::string kKey = "sluice:{daily:k1}:fixed-window";  // NOLINT(runtime/string)

using test::parse;

// The limit as an instance whose wall clock reads `instance` sends it.
ScriptLimit sent_at(const spec::LimitSpec& spec, core::Nanos instance) {
  const auto* p = std::get_if<core::FixedWindow::Params>(&spec.params);
  return with_calendar_bounds(script_limit(spec), calendar_bounds(*p->calendar, instance));
}

const spec::LimitSpec& daily() {
  static const spec::LimitSpec s =
      parse("fixed-window:limit=3,window=1d,align=calendar,timezone=Europe/Berlin");
  return s;
}

TEST(CalendarBounds, ArePreviousCurrentAndNextWindowsInUnixSeconds) {
  const auto* p = std::get_if<core::FixedWindow::Params>(&daily().params);
  const CalendarBounds b = calendar_bounds(*p->calendar, kFeb1Berlin + 5 * kSec);
  EXPECT_EQ(b[0], kFeb1Berlin / kSec - 86400);
  EXPECT_EQ(b[1], kFeb1Berlin / kSec);
  EXPECT_EQ(b[2], kFeb1Berlin / kSec + 86400);
  EXPECT_EQ(b[3], kFeb1Berlin / kSec + 2 * 86400);
}

TEST(ScriptCalendar, TheFourthOfTheDayWaitsForBerlinMidnight) {
  ScriptRunner redis;
  const core::Nanos now = kFeb1Berlin - 30 * kSec;  // Jan 31, 23:59:30 in Berlin
  for (int left = 2; left >= 0; --left) {
    const core::Decision d = redis.decide(sent_at(daily(), now), kKey, now);
    ASSERT_TRUE(d.allowed);
    EXPECT_EQ(d.remaining, left);
    EXPECT_EQ(d.reset_after, 30 * kSec);
  }
  const core::Decision fourth = redis.decide(sent_at(daily(), now), kKey, now);
  EXPECT_FALSE(fourth.allowed);
  EXPECT_EQ(fourth.retry_after, 30 * kSec);
  const core::Decision midnight = redis.decide(sent_at(daily(), kFeb1Berlin), kKey, kFeb1Berlin);
  EXPECT_TRUE(midnight.allowed);
  EXPECT_EQ(midnight.remaining, 2);
  EXPECT_EQ(midnight.reset_after, 86400 * kSec);
}

TEST(ScriptCalendar, RedisClockPicksTheDayWhateverTheInstanceClockSays) {
  ScriptRunner redis;
  const core::Nanos redis_now = kFeb1Berlin - 30 * kSec;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(redis.decide(sent_at(daily(), redis_now), kKey, redis_now).allowed);
  // An instance 60 s fast already names Feb 1 its current day; Redis is still on Jan 31,
  // which it names as the previous one: Jan 31's count holds, until Redis's midnight.
  const core::Decision fast =
      redis.decide(sent_at(daily(), redis_now + 60 * kSec), kKey, redis_now);
  EXPECT_FALSE(fast.allowed);
  EXPECT_EQ(fast.retry_after, 30 * kSec);
  // Past midnight by Redis, an instance 60 s slow (still on Jan 31) counts in Feb 1.
  const core::Nanos after = kFeb1Berlin + 10 * kSec;
  const core::Decision slow = redis.decide(sent_at(daily(), after - 60 * kSec), kKey, after);
  EXPECT_TRUE(slow.allowed);
  EXPECT_EQ(slow.remaining, 2);
  EXPECT_EQ(slow.reset_after, (86400 - 10) * kSec);
  // The fast instance agrees: Feb 1 has one request counted.
  const core::Decision fast_later = redis.decide(sent_at(daily(), after + 60 * kSec), kKey, after);
  EXPECT_EQ(fast_later.remaining, 1);
}

TEST(ScriptCalendar, ADaylightSavingDayIs23Or25Hours) {
  ScriptRunner redis;
  const core::Decision spring = redis.decide(sent_at(daily(), kMar29Berlin), kKey, kMar29Berlin);
  EXPECT_EQ(spring.reset_after, 23 * 3600 * kSec);
  const core::Decision autumn =
      redis.decide(sent_at(daily(), kOct25Berlin), "sluice:{daily:k2}:fixed-window", kOct25Berlin);
  EXPECT_EQ(autumn.reset_after, 25 * 3600 * kSec);
}

TEST(ScriptCalendar, AMonthEndsOnTheFirst) {
  const spec::LimitSpec monthly =
      parse("fixed-window:limit=2,window=1mo,align=calendar,timezone=Europe/Berlin");
  ScriptRunner redis;
  const std::string key = "sluice:{monthly:k}:fixed-window";
  const core::Nanos last = kFeb1Berlin - kSec;  // Jan 31, 23:59:59
  EXPECT_TRUE(redis.decide(sent_at(monthly, last), key, last, 2).allowed);
  const core::Decision spent = redis.decide(sent_at(monthly, last), key, last);
  EXPECT_FALSE(spent.allowed);
  EXPECT_EQ(spent.retry_after, kSec);
  const core::Decision february = redis.decide(sent_at(monthly, kFeb1Berlin), key, kFeb1Berlin);
  EXPECT_TRUE(february.allowed);
  EXPECT_EQ(february.reset_after, kMar1Berlin - kFeb1Berlin);  // 28 days
}

TEST(ScriptCalendar, AnInstanceClockOffByMoreThanAWindowCountsInItsNearestWindow) {
  ScriptRunner redis;
  // The instance is two days behind Redis: Redis's day is past all three it names, so the
  // count goes to the last of them (its next day), which ends before Redis's now.
  const core::Nanos redis_now = kFeb1Berlin + 2 * 86400 * kSec + 5 * kSec;
  const core::Decision d = redis.decide(sent_at(daily(), kFeb1Berlin - kSec), kKey, redis_now);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 2);
  EXPECT_EQ(d.reset_after, 1);  // its end has passed: at once
}

}  // namespace
}  // namespace sluice::backend::redis::testing
