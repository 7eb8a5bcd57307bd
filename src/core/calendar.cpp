// Calendar (sluice/core/calendar.hpp): civil dates from day numbers (Howard Hinnant's
// public-domain algorithms) and local midnights back to UTC through the offset table.
#include "sluice/core/calendar.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace sluice::core {
namespace {

constexpr std::int64_t kDay = 86400;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// Days since 1970-01-01 of y-m-d (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = floor_div(y, 400);
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The month number (year * 12 + month - 1) of a day number.
std::int64_t month_of(std::int64_t days) {
  const std::int64_t z = days + 719468;
  const std::int64_t era = floor_div(z, 146097);
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
  return y * 12 + (m - 1);
}

// 1970-01-01 was a Thursday: Monday-based weeks start 3 days before it.
constexpr std::int64_t kMondayShift = 3;

}  // namespace

Calendar::Calendar(CalendarUnit unit, std::vector<ZoneOffset> offsets)
    : unit_(unit), offsets_(std::move(offsets)) {
  assert(!offsets_.empty());
}

std::int32_t Calendar::offset_at(std::int64_t unix_s) const {
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), unix_s,
                             [](std::int64_t t, const ZoneOffset& o) { return t < o.since; });
  return it == offsets_.begin() ? offsets_.front().offset : std::prev(it)->offset;
}

// In each stretch of one offset the local times run [since + offset, next + offset): the
// first instant at or past `local_s` is the earliest such point over the stretches near it.
std::int64_t Calendar::first_at_or_after_local(std::int64_t local_s) const {
  const std::int64_t lo = local_s - 2 * kDay;  // offsets and their changes stay within a day
  const std::int64_t hi = local_s + 2 * kDay;
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), lo,
                             [](std::int64_t t, const ZoneOffset& o) { return t < o.since; });
  if (it != offsets_.begin()) --it;
  std::int64_t best = hi;
  for (; it != offsets_.end() && it->since <= hi; ++it) {
    const bool first = it == offsets_.begin();
    const std::int64_t since = first ? lo : it->since;
    const auto next = std::next(it);
    const std::int64_t until = next == offsets_.end() ? hi + 1 : next->since;
    const std::int64_t at = std::max(since, local_s - it->offset);
    if (at < until) best = std::min(best, at);
  }
  return best;
}

std::int64_t Calendar::start_of(std::int64_t index) const {
  std::int64_t day = index;
  if (unit_ == CalendarUnit::kWeek) day = index * 7 - kMondayShift;
  if (unit_ == CalendarUnit::kMonth) {
    const std::int64_t y = floor_div(index, 12);
    day = days_from_civil(y, static_cast<unsigned>(index - y * 12) + 1, 1);
  }
  return first_at_or_after_local(day * kDay);
}

CalendarWindow Calendar::window_at(Nanos unix_ns) const {
  const std::int64_t s = floor_div(unix_ns, kNanosPerSecond);
  const std::int64_t day = floor_div(s + offset_at(s), kDay);
  std::int64_t index = day;
  if (unit_ == CalendarUnit::kWeek) index = floor_div(day + kMondayShift, 7);
  if (unit_ == CalendarUnit::kMonth) index = month_of(day);
  // A clock set back past midnight shows the day before again; the window has moved on.
  std::int64_t end = start_of(index + 1);
  while (s >= end) end = start_of(++index + 1);
  return CalendarWindow{index, start_of(index) * kNanosPerSecond, end * kNanosPerSecond};
}

}  // namespace sluice::core
