// Parsing and formatting of durations and plain counts (sluice/core/time.hpp).
#include <array>
#include <charconv>
#include <string>
#include <string_view>

#include "sluice/core/time.hpp"

namespace sluice::core {
namespace {

struct Unit {
  std::string_view suffix;
  Nanos nanos;
};
// Longest suffixes first so "ms" is not read as "m" followed by garbage.
constexpr std::array<Unit, 5> kUnits{{{"us", kNanosPerMicro},
                                      {"ms", kNanosPerMilli},
                                      {"s", kNanosPerSecond},
                                      {"m", kNanosPerMinute},
                                      {"h", kNanosPerHour}}};

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

Expected<std::int64_t> parse_count(std::string_view text, std::string_view what) {
  if (!all_digits(text)) {
    return make_error(std::string(what) + " '" + std::string(text) +
                      "' is not a plain non-negative integer");
  }
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return make_error(std::string(what) + " '" + std::string(text) + "' is out of range");
  }
  return v;
}

Expected<Nanos> parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string_view number = text.substr(0, digits);
  const std::string_view suffix = text.substr(digits);
  if (number.empty()) {
    return make_error("duration '" + std::string(text) +
                      "' must be digits then a unit (e.g. 1500us, 250ms, 1s, 2m, 1h)");
  }
  for (const Unit& u : kUnits) {
    if (suffix != u.suffix) continue;
    auto n = parse_count(number, "duration");
    if (!n) return make_error(n.error());
    Nanos out = 0;
    if (__builtin_mul_overflow(*n, u.nanos, &out)) {
      return make_error("duration '" + std::string(text) + "' is too large (max about 292 years)");
    }
    return out;
  }
  return make_error("duration '" + std::string(text) + "' has unknown unit '" +
                    std::string(suffix) + "' (accepted: us, ms, s, m, h)");
}

std::string format_duration(Nanos d) {
  for (auto it = kUnits.rbegin(); it != kUnits.rend(); ++it) {
    if (d != 0 && d % it->nanos == 0)
      return std::to_string(d / it->nanos) + std::string(it->suffix);
  }
  if (d % kNanosPerMicro == 0) return std::to_string(d / kNanosPerMicro) + "us";
  return std::to_string(d) + "ns";
}

}  // namespace sluice::core
