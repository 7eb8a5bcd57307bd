// The response statuses a rule counts (`count_if: {status: [401, 403]}` or a class, `4xx`):
// login-failure limits, where only the failures are charged after the response.
#pragma once

#include <bitset>
#include <optional>
#include <string_view>

namespace sluice::core {

// A table of the 500 statuses 100..599, one bit each: matching is one lookup per response.
class StatusSet {
 public:
  // An entry as config states it: "401" or a class "4xx"; false when it is neither.
  bool add(std::string_view entry) {
    if (entry.size() != 3 || entry[0] < '1' || entry[0] > '5') return false;
    if (entry.substr(1) == "xx" || entry.substr(1) == "XX") {
      const int base = (entry[0] - '0') * 100;
      for (int s = base; s < base + 100; ++s) bits_.set(static_cast<std::size_t>(s - 100));
      return true;
    }
    if (!digit(entry[1]) || !digit(entry[2])) return false;
    const int s = (entry[0] - '0') * 100 + (entry[1] - '0') * 10 + (entry[2] - '0');
    bits_.set(static_cast<std::size_t>(s - 100));
    return true;
  }
  bool contains(int status) const {
    return status >= 100 && status <= 599 && bits_.test(static_cast<std::size_t>(status - 100));
  }
  bool empty() const { return bits_.none(); }

 private:
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  std::bitset<500> bits_;
};

}  // namespace sluice::core
