// summarize() and the text table (sluice/simulate/summary.hpp).
#include "sluice/simulate/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

namespace sluice::simulate {

std::vector<LimitSummary> summarize(const Result& r) {
  std::vector<LimitSummary> out;
  for (const auto& l : r.limits) {
    LimitSummary s;
    s.label = l.label;
    s.offered = r.requests;
    s.admitted = l.admitted;
    s.denied = l.denied;
    s.delayed = l.delayed;
    s.passed_late = l.passed_late;
    s.p50_us = l.delays.quantile(0.50);
    s.p90_us = l.delays.quantile(0.90);
    s.p99_us = l.delays.quantile(0.99);
    s.max_us = l.delays.max();
    out.push_back(std::move(s));
  }
  return out;
}

std::string format_delay(std::int64_t us) {
  if (us == 0) return "0";
  if (us < 1000) return std::to_string(us) + "us";
  const bool seconds = us >= 1'000'000;
  const double v = static_cast<double>(us) / (seconds ? 1e6 : 1e3);
  const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  std::string text = fmt::format("{:.{}f}", v, decimals);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text + (seconds ? "s" : "ms");
}

std::string format_share(std::int64_t part, std::int64_t whole) {
  if (whole == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string summary_text(const Result& r) {
  const auto rows = summarize(r);
  std::size_t label_width = 5;
  for (const auto& s : rows) label_width = std::max(label_width, s.label.size());
  std::string out;
  auto row = [&](std::string_view label, const std::array<std::string, 9>& cells) {
    fmt::format_to(std::back_inserter(out), "{:<{}}", label, label_width);
    static constexpr std::array<int, 9> kWidths{10, 9, 9, 8, 9, 11, 9, 9, 9};
    for (std::size_t i = 0; i < cells.size(); ++i) {
      fmt::format_to(std::back_inserter(out), "{:>{}}", cells[i], kWidths[i]);
    }
    out += '\n';
  };
  row("limit",
      {"offered", "admitted", "denied", "share", "delayed", "delay p50", "p90", "p99", "max"});
  for (const auto& s : rows) {
    row(s.label,
        {std::to_string(s.offered), std::to_string(s.admitted), std::to_string(s.denied),
         format_share(s.admitted, s.offered), std::to_string(s.delayed), format_delay(s.p50_us),
         format_delay(s.p90_us), format_delay(s.p99_us), format_delay(s.max_us)});
  }
  return out;
}

}  // namespace sluice::simulate
