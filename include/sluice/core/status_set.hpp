// The response statuses a rule counts (`count_if: {status: [401, 403]}` or a class, `4xx`):
// login-failure limits, where only the failures are charged after the response.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

namespace sluice::core {

// An entry as config states it: a status "401" (100 to 599) or a class "4xx".
inline bool is_status_entry(std::string_view e) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (e.size() != 3 || e[0] < '1' || e[0] > '5') return false;
  if (e.substr(1) == "xx" || e.substr(1) == "XX") return true;
  return digit(e[1]) && digit(e[2]);
}

// Whether `status` is what one of `entries` (each is_status_entry) names: that status, or one
// of its class. A rule's few entries match a response without building a set.
inline bool status_listed(std::span<const std::string> entries, int status) {
  return std::any_of(entries.begin(), entries.end(), [&](std::string_view e) {
    if (status / 100 != e[0] - '0') return false;
    if (e[1] == 'x' || e[1] == 'X') return true;
    return status % 100 == (e[1] - '0') * 10 + (e[2] - '0');
  });
}

}  // namespace sluice::core
