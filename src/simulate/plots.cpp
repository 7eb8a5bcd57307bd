// The plots (sluice/simulate/plots.hpp), drawn with svg.hpp. Every panel of the admitted plot
// shares one y scale, so limits compare at a glance.
#include "sluice/simulate/plots.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sluice/simulate/summary.hpp"
#include "sluice/simulate/svg.hpp"

namespace sluice::simulate {
namespace {

using svg::kLeft;
using svg::kLegendLine;
using svg::kPlotWidth;
using svg::kWidth;
using svg::seconds;

// Per-bucket totals over the sources, as a rate per second or a running total.
std::vector<double> totals(const Result& r,
                           const std::vector<const std::vector<std::int64_t>*>& rows, Scale scale) {
  std::vector<double> out(r.buckets);
  for (const auto* row : rows) {
    for (std::size_t b = 0; b < r.buckets; ++b) out[b] += static_cast<double>((*row)[b]);
  }
  for (std::size_t b = 0; b < r.buckets; ++b) {
    if (scale == Scale::kRate)
      out[b] /= seconds(r.bucket);
    else if (b > 0)
      out[b] += out[b - 1];
  }
  return out;
}

template <class Get>
std::vector<double> limit_totals(const Result& r, const LimitSeries& l, Scale scale, Get get) {
  std::vector<std::vector<std::int64_t>> rows(l.cells.size(), std::vector<std::int64_t>(r.buckets));
  std::vector<const std::vector<std::int64_t>*> refs;
  for (std::size_t s = 0; s < l.cells.size(); ++s) {
    for (std::size_t b = 0; b < r.buckets; ++b) rows[s][b] = get(l.cells[s][b]);
    refs.push_back(&rows[s]);
  }
  return totals(r, refs, scale);
}

double peak(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

using Entry = svg::LegendEntry;

int legend_lines(const std::vector<Entry>& entries) {
  return svg::legend_lines(entries, kPlotWidth);
}

void legend(svg::Canvas& c, double y, const std::vector<Entry>& entries) {
  svg::legend(c, kLeft, kPlotWidth, y, entries);
}

// A thin line where the traffic ends, when the plot runs on for requests still delayed.
void mark_end(svg::Canvas& c, const svg::Frame& f, const Result& r, double top, double height) {
  const double end = seconds(r.duration);
  if (seconds(r.bucket) * static_cast<double>(r.buckets) <= end) return;
  c.line(f.x(end), top, f.x(end), top + height, "#999", 1, "2 3");
}

// The longest delay per bucket; a bucket with nothing admitted holds the last value, and the
// line ends at the last bucket that admitted anything.
std::vector<double> longest_delays(const Result& r, const LimitSeries& l, double unit) {
  std::vector<double> v(r.buckets, std::numeric_limits<double>::quiet_NaN());
  double last = 0;
  std::size_t end = 0;
  for (std::size_t b = 0; b < r.buckets; ++b) {
    std::int64_t admitted = 0, longest = 0;
    for (const auto& row : l.cells) {
      admitted += row[b].admitted;
      longest = std::max(longest, row[b].delay_max_us);
    }
    if (admitted > 0) {
      last = static_cast<double>(longest) / unit;
      end = b + 1;
    }
    v[b] = last;
  }
  std::fill(v.begin() + static_cast<std::ptrdiff_t>(end), v.end(),
            std::numeric_limits<double>::quiet_NaN());
  return v;
}

}  // namespace

std::string admitted_plot(const Result& r, Scale scale, bool standalone) {
  constexpr double kTop = 44, kTitle = 18, kPanel = 110, kGap = 22;
  const std::size_t n = r.limits.size();
  const int height =
      static_cast<int>(kTop + static_cast<double>(n) * (kTitle + kPanel + kGap) + 10);
  svg::Canvas c(kWidth, height, standalone, "Admitted against offered, per limit");
  std::vector<const std::vector<std::int64_t>*> offered_rows;
  for (const auto& row : r.offered) offered_rows.push_back(&row);
  const auto offered = totals(r, offered_rows, scale);
  double y_max = peak(offered);
  std::vector<std::vector<double>> admitted, passed;
  for (const auto& l : r.limits) {
    admitted.push_back(limit_totals(r, l, scale, [](const Cell& x) { return x.admitted; }));
    passed.push_back(limit_totals(r, l, scale, [](const Cell& x) { return x.passed; }));
    y_max = std::max({y_max, peak(admitted.back()), peak(passed.back())});
  }
  const auto ys = svg::ticks(y_max, 3);
  const double x_max = seconds(r.bucket) * static_cast<double>(r.buckets);
  const auto xs = svg::ticks(x_max, 10);
  const bool stepped = scale == Scale::kRate;
  legend(c, 18,
         {{"#cfcfcf", "offered", 'b'},
          {"#555", "admitted, as requests arrive", 'l'},
          {"#333", "passed, as they proceed after any delay", 'd'}});
  c.text(kLeft, 36,
         stepped ? "requests per second in each bucket; time in seconds"
                 : "requests so far (the slope is the rate); time in seconds",
         "start", 11, "#555");
  for (std::size_t i = 0; i < n; ++i) {
    const LimitSeries& l = r.limits[i];
    const double top = kTop + static_cast<double>(i) * (kTitle + kPanel + kGap) + kTitle;
    svg::Frame f(kLeft, top, kPlotWidth, kPanel, x_max, ys.back());
    c.text(kLeft, top - 6,
           l.label + ": admitted " + std::to_string(l.admitted) + " of " +
               std::to_string(r.requests) + " (" + format_share(l.admitted, r.requests) + ")",
           "start", 12, "#111");
    f.axes(c, xs, ys, true);
    c.path(f.trace(offered, seconds(r.bucket), stepped, true), "none", "#cfcfcf", 0);
    mark_end(c, f, r, top, kPanel);
    c.path(f.trace(admitted[i], seconds(r.bucket), stepped, false), std::string(svg::colour(i)),
           "none", 1.5);
    if (l.delayed > 0) {
      c.path(f.trace(passed[i], seconds(r.bucket), stepped, false), "#333", "none", 1.2, "4 3");
    }
  }
  return c.finish();
}

std::string delay_plot(const Result& r, bool standalone) {
  std::vector<Entry> entries;
  std::int64_t top_us = 0;
  for (std::size_t i = 0; i < r.limits.size(); ++i) {
    const LimitSeries& l = r.limits[i];
    top_us = std::max(top_us, l.delays.max());
    if (l.delayed > 0) entries.push_back({svg::colour(i), l.label, 'l'});
  }
  for (const auto& l : r.limits) {
    if (l.delayed == 0) entries.push_back({"", l.label + ": no delay", '-'});
  }
  const double kTop = 30 + kLegendLine * legend_lines(entries), kPanel = 220;
  svg::Canvas c(kWidth, static_cast<int>(kTop + kPanel + 24), standalone,
                "Queue delay over time, per limit");
  const bool in_s = top_us >= 2'000'000, in_ms = top_us >= 2'000;
  const double unit = in_s ? 1e6 : in_ms ? 1e3 : 1;
  const auto ys = svg::ticks(static_cast<double>(top_us) / unit, 4);
  const double x_max = seconds(r.bucket) * static_cast<double>(r.buckets);
  svg::Frame f(kLeft, kTop, kPlotWidth, kPanel, x_max, ys.back());
  legend(c, 18, entries);
  c.text(kLeft, kTop - 12,
         std::string("longest delay of the requests admitted in each bucket, in ") +
             (in_s    ? "s"
              : in_ms ? "ms"
                      : "us") +
             "; time in seconds",
         "start", 11, "#555");
  f.axes(c, svg::ticks(x_max, 10), ys, true);
  mark_end(c, f, r, kTop, kPanel);
  for (std::size_t i = 0; i < r.limits.size(); ++i) {
    if (r.limits[i].delayed == 0) continue;
    c.path(f.trace(longest_delays(r, r.limits[i], unit), seconds(r.bucket), true, false),
           std::string(svg::colour(i)), "none", 1.5);
  }
  if (top_us == 0) {
    c.text(kLeft + kPlotWidth / 2, kTop + kPanel / 2, "No limit delayed any request", "middle", 14,
           "#555");
  }
  return c.finish();
}

std::string fairness_plot(const Result& r, bool standalone) {
  std::vector<Entry> entries;
  for (std::size_t s = 0; s < r.sources.size(); ++s) {
    entries.push_back({svg::colour(s), r.sources[s], 'b'});
  }
  const double kTop = 22 + kLegendLine * legend_lines(entries), kRow = 40, kBar = 16,
               kBarWidth = kPlotWidth - 110;
  const std::size_t rows = r.limits.size() + 1;
  svg::Canvas c(kWidth, static_cast<int>(kTop + static_cast<double>(rows) * kRow + 8), standalone,
                "Share of each source in what each limit admitted");
  legend(c, 18, entries);
  for (std::size_t i = 0; i < rows; ++i) {
    const bool offered = i == 0;
    const auto& counts = offered ? r.offered_by_source : r.limits[i - 1].admitted_by_source;
    std::int64_t total = 0;
    for (auto n : counts) total += n;
    const double top = kTop + static_cast<double>(i) * kRow;
    c.text(kLeft, top + 12, offered ? std::string("offered") : r.limits[i - 1].label, "start", 12,
           "#111");
    double x = kLeft;
    for (std::size_t s = 0; s < counts.size() && total > 0; ++s) {
      const double w = kBarWidth * static_cast<double>(counts[s]) / static_cast<double>(total);
      c.rect(x, top + 17, w, kBar, svg::colour(s));
      if (w > 44) c.text(x + w / 2, top + 29, format_share(counts[s], total), "middle", 11, "#fff");
      x += w;
    }
    c.text(kLeft + kBarWidth + 8, top + 29,
           std::to_string(total) + (offered ? " offered" : " admitted"), "start", 11, "#555");
  }
  return c.finish();
}

}  // namespace sluice::simulate
