// calendar_for (sluice/spec/calendar_zones.hpp): offsets from date::tzdb, interned per zone.
#include "sluice/spec/calendar_zones.hpp"

#include <date/tz.h>

#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sluice::spec {
namespace {

constexpr std::int64_t kFirst = 0;          // 1970-01-01
constexpr std::int64_t kLast = 4102444800;  // 2100-01-01

std::vector<core::ZoneOffset> offsets_of(const date::time_zone& zone) {
  using std::chrono::seconds;
  std::vector<core::ZoneOffset> out;
  std::int64_t t = kFirst;
  while (t < kLast) {
    const date::sys_info info = zone.get_info(date::sys_seconds(seconds(t)));
    const auto offset = static_cast<std::int32_t>(info.offset.count());
    if (out.empty() || out.back().offset != offset) {
      out.push_back({out.empty() ? std::numeric_limits<std::int64_t>::min() / 2 : t, offset});
    }
    const std::int64_t end = info.end.time_since_epoch().count();
    if (end <= t) break;  // the last rule holds forever
    t = end;
  }
  return out;
}

}  // namespace

core::Expected<const core::Calendar*> calendar_for(core::CalendarUnit unit, std::string_view zone) {
  static std::mutex mutex;
  static std::map<std::pair<int, std::string>, std::unique_ptr<const core::Calendar>> calendars;
  std::lock_guard<std::mutex> guard(mutex);
  const std::pair<int, std::string> key{static_cast<int>(unit), std::string(zone)};
  if (auto it = calendars.find(key); it != calendars.end()) return it->second.get();
  const date::time_zone* tz = nullptr;
  try {
    tz = date::locate_zone(key.second);
  } catch (const std::exception&) {
    return core::make_error("unknown time zone '" + key.second +
                            "' (an IANA name from /usr/share/zoneinfo, e.g. Europe/Berlin, UTC)");
  }
  auto calendar = std::make_unique<const core::Calendar>(unit, offsets_of(*tz));
  const core::Calendar* out = calendar.get();
  calendars.emplace(key, std::move(calendar));
  return out;
}

}  // namespace sluice::spec
