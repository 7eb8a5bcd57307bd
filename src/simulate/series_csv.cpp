// write_series_csv (sluice/simulate/series_csv.hpp): rows in time order, then limit, then source.
#include "sluice/simulate/series_csv.hpp"

#include <fmt/format.h>

#include <iterator>

namespace sluice::simulate {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

bool write_series_csv(const Result& r, std::FILE* out) {
  std::string buf =
      "t_us,limit,source,offered,admitted,denied,passed,delayed,delay_sum_us,delay_max_us\n";
  std::vector<std::string> limits, sources;
  for (const auto& l : r.limits) limits.push_back(csv_field(l.label));
  for (const auto& s : r.sources) sources.push_back(csv_field(s));
  for (std::size_t b = 0; b < r.buckets; ++b) {
    const auto t_us = static_cast<std::int64_t>(b) * (r.bucket / core::kNanosPerMicro);
    for (std::size_t l = 0; l < r.limits.size(); ++l) {
      for (std::size_t s = 0; s < r.sources.size(); ++s) {
        const Cell& c = r.limits[l].cells[s][b];
        fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},{},{},{},{},{}\n", t_us, limits[l],
                       sources[s], r.offered[s][b], c.admitted, c.denied, c.passed, c.delayed,
                       c.delay_sum_us, c.delay_max_us);
      }
    }
    if (buf.size() >= (1u << 16)) {
      std::fwrite(buf.data(), 1, buf.size(), out);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), out);
  std::fflush(out);
  return !std::ferror(out);
}

}  // namespace sluice::simulate
