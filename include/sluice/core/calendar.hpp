// Calendar windows (days, ISO weeks, months) in one time zone, as plain numbers: the zone's UTC
// offsets are handed in as a table, so finding a window is arithmetic over it, no I/O.
#pragma once

#include <cstdint>
#include <vector>

#include "sluice/core/time.hpp"

namespace sluice::core {

enum class CalendarUnit : std::uint8_t { kDay, kWeek, kMonth };

// From `since` (Unix seconds) on, local time is UTC plus `offset` seconds, until the next row.
struct ZoneOffset {
  std::int64_t since = 0;
  std::int32_t offset = 0;
};

// One window: its number (days, ISO weeks or months since an epoch of the unit's own; only
// equality and order matter) and its bounds in Unix nanoseconds, [start, end).
struct CalendarWindow {
  std::int64_t index = 0;
  Nanos start = 0;
  Nanos end = 0;
};

// A window starts at the first instant whose local time is at or past the local midnight that
// begins it: on a day whose midnight a DST change skips, that is the first instant after the
// gap; where midnight happens twice, the first. Weeks start on Monday (ISO 8601).
class Calendar {
 public:
  // `offsets` sorted by `since`, the first row covering every earlier time too; not empty.
  Calendar(CalendarUnit unit, std::vector<ZoneOffset> offsets);

  CalendarWindow window_at(Nanos unix_ns) const;

  CalendarUnit unit() const { return unit_; }
  std::int32_t offset_at(std::int64_t unix_s) const;

 private:
  std::int64_t start_of(std::int64_t index) const;  // Unix seconds
  std::int64_t first_at_or_after_local(std::int64_t local_s) const;

  CalendarUnit unit_;
  std::vector<ZoneOffset> offsets_;
};

}  // namespace sluice::core
