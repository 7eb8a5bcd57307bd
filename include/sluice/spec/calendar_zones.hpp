// The calendars of `fixed-window:...,align=calendar,timezone=ZONE`: the zone's UTC offsets read
// once from the system's tz database (Howard Hinnant's date/tz over /usr/share/zoneinfo).
#pragma once

#include <string_view>

#include "sluice/core/calendar.hpp"
#include "sluice/core/expected.hpp"

namespace sluice::spec {

// The calendar of `unit` in the IANA zone `zone` ("Europe/Berlin", "UTC"), kept for the life of
// the process (one per unit and zone asked for, a few KiB each), so limit parameters may point
// at it. Thread-safe. The offsets cover 1970 to 2100; later times keep 2100's rules.
// Error: a zone the database does not know.
core::Expected<const core::Calendar*> calendar_for(core::CalendarUnit unit, std::string_view zone);

}  // namespace sluice::spec
