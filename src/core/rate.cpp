// Parsing and formatting of rates (sluice/core/rate.hpp).
#include "sluice/core/rate.hpp"

#include <string>

namespace sluice::core {

Expected<Rate> parse_rate(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    return make_error("rate '" + std::string(text) +
                      "' must be COUNT/PERIOD (e.g. 10/s, 600/m, 5/h, 100/10s)");
  }
  auto count = parse_count(text.substr(0, slash), "rate count");
  if (!count) return make_error("rate '" + std::string(text) + "': " + count.error());
  if (*count == 0) return make_error("rate '" + std::string(text) + "': count must be at least 1");
  std::string_view period_text = text.substr(slash + 1);
  Nanos period = 0;
  if (period_text == "s") {
    period = kNanosPerSecond;
  } else if (period_text == "m") {
    period = kNanosPerMinute;
  } else if (period_text == "h") {
    period = kNanosPerHour;
  } else {
    auto d = parse_duration(period_text);
    if (!d) {
      return make_error("rate '" + std::string(text) + "': period must be s, m, h or a duration; " +
                        d.error());
    }
    period = *d;
  }
  if (period <= 0) return make_error("rate '" + std::string(text) + "': period must be positive");
  return Rate{*count, period};
}

std::string format_rate(const Rate& r) {
  if (r.period == kNanosPerSecond) return std::to_string(r.count) + "/s";
  if (r.period == kNanosPerMinute) return std::to_string(r.count) + "/m";
  if (r.period == kNanosPerHour) return std::to_string(r.count) + "/h";
  return std::to_string(r.count) + "/" + format_duration(r.period);
}

}  // namespace sluice::core
