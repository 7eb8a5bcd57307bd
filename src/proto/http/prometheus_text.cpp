// Prometheus text format helpers (prometheus_text.hpp).
#include "sluice/proto/http/prometheus_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace sluice::proto::http {

std::string prometheus_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

void prometheus_family(std::string& out, std::string_view name, std::string_view type,
                       std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
  out.append(name).append(" ").append(type).append("\n");
}

std::string prometheus_labels(
    std::initializer_list<std::pair<std::string_view, std::string_view>> labels) {
  std::string out;
  char sep = '{';
  for (const auto& [k, v] : labels) {
    out += sep;
    out.append(k).append("=\"").append(prometheus_label(v)).append("\"");
    sep = ',';
  }
  if (!out.empty()) out += '}';
  return out;
}

void prometheus_line(std::string& out, std::string_view name, std::string_view labels,
                     double value) {
  out.append(name).append(labels).append(" ");
  if (std::isfinite(value) && std::fabs(value) < 9.0e15 && value == std::floor(value)) {
    out.append(std::to_string(static_cast<std::int64_t>(value)));
  } else {
    out.append(fmt::format("{}", value));
  }
  out += '\n';
}

void prometheus_sample(std::string& out, std::string_view name,
                       std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
                       std::uint64_t value) {
  out.append(name);
  if (labels.size() != 0) {
    char sep = '{';
    for (const auto& [k, v] : labels) {
      out += sep;
      out.append(k).append("=\"").append(prometheus_label(v)).append("\"");
      sep = ',';
    }
    out += '}';
  }
  out.append(" ").append(std::to_string(value)).append("\n");
}

}  // namespace sluice::proto::http
