// Splits a query string ("service_ms=20&workers=4") into (name, value) pairs, for the test
// servers' control paths; no percent-decoding (their parameters are plain numbers).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sluice_test {

inline std::vector<std::pair<std::string, std::string>> query_params(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t pos = 0;
  while (pos < query.size()) {
    std::size_t end = query.find('&', pos);
    if (end == std::string::npos) end = query.size();
    const std::string part = query.substr(pos, end - pos);
    if (!part.empty()) {
      const auto eq = part.find('=');
      out.emplace_back(part.substr(0, eq), eq == std::string::npos ? "" : part.substr(eq + 1));
    }
    pos = end + 1;
  }
  return out;
}

}  // namespace sluice_test
