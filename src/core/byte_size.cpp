// Byte sizes (sluice/core/byte_size.hpp).
#include "sluice/core/byte_size.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

namespace sluice::core {

Expected<std::size_t> parse_bytes(std::string_view text) {
  const std::string s(text);
  auto fail = [&](const std::string& why) { return make_error("size '" + s + "' " + why); };
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) return fail("must be bytes with an optional unit (e.g. 64MiB, 16m, 1GiB)");
  errno = 0;
  const unsigned long long n = std::strtoull(s.substr(0, digits).c_str(), nullptr, 10);
  if (errno == ERANGE) return fail("is too large");
  std::string unit = s.substr(digits);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  unsigned long long scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kib" || unit == "kb") scale = 1ull << 10;
  if (unit == "m" || unit == "mib" || unit == "mb") scale = 1ull << 20;
  if (unit == "g" || unit == "gib" || unit == "gb") scale = 1ull << 30;
  if (scale == 0) return fail("has an unknown unit (accepted: bytes, k/KiB, m/MiB, g/GiB)");
  if (n > std::numeric_limits<std::size_t>::max() / scale) return fail("is too large");
  return static_cast<std::size_t>(n * scale);
}

std::string format_bytes(std::size_t bytes) {
  constexpr std::pair<std::size_t, std::string_view> kUnits[] = {
      {std::size_t{1} << 30, "GiB"}, {std::size_t{1} << 20, "MiB"}, {std::size_t{1} << 10, "KiB"}};
  for (const auto& [size, unit] : kUnits) {
    if (bytes != 0 && bytes % size == 0) return std::to_string(bytes / size) + std::string(unit);
  }
  return std::to_string(bytes);
}

}  // namespace sluice::core
