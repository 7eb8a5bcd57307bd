// The collapse model's outputs (sluice/simulate/collapse_report.hpp), drawn with svg.hpp: one
// line per guard, the phases marked and named above each plot.
#include "sluice/simulate/collapse_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "sluice/simulate/series_csv.hpp"
#include "sluice/simulate/svg.hpp"

namespace sluice::simulate {
namespace {

using svg::kLeft;
using svg::kPlotWidth;
using svg::kWidth;
using svg::seconds;
constexpr double kPanel = 260;

template <class Get>
std::vector<double> column(const CollapseSeries& s, Get get) {
  std::vector<double> v;
  v.reserve(s.buckets.size());
  for (const auto& b : s.buckets) v.push_back(get(b));
  return v;
}

// Each phase: a thin line at its start and its load and upstream above the frame.
void mark_phases(svg::Canvas& c, const svg::Frame& f, const CollapseModel& m, double top) {
  core::Nanos at = 0;
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    const CollapsePhase& p = m.phases[i];
    if (at > 0) c.line(f.x(seconds(at)), top, f.x(seconds(at)), top + kPanel, "#999", 1, "2 3");
    const std::string label = fmt::format("{:g}x, C={} S={:g}ms", p.load, p.workers,
                                          static_cast<double>(p.service) / 1e6);
    c.text(f.x(seconds(at)) + 3, top - 4, label, "start", 10, "#555");
    at += p.length;
  }
}

struct PlotSpec {
  std::string_view name;
  std::string_view title;
  std::string_view axis;  // what y is
  bool skip_unlimited;    // the guard `none` has no limit to draw
};

constexpr std::array<PlotSpec, 3> kSpecs{{
    {"goodput", "Goodput over time, per guard",
     "answers within the deadline per second (dashed: the upstream's capacity); time in s", false},
    {"limit", "Concurrency limit over time, per guard",
     "the guard's limit at each bucket's end, drawn at the top when above it (dashed: the "
     "upstream's workers); time in s",
     true},
    {"latency", "p99 of the answers within the deadline, per guard",
     "p99 in ms of the answers within the deadline; time in s", false},
}};

double value(std::string_view plot, const CollapseBucket& b) {
  if (plot == "goodput") return b.goodput;
  if (plot == "limit") return b.limit;
  return b.p99_ms;
}

// The y scale: goodput to a little over the highest capacity; limits to 4x the most workers
// (AIMD climbs to 200: drawn at the top edge, clipped); latency to the deadline.
double y_top(const CollapseResult& r, std::string_view plot) {
  const CollapseModel& m = *r.model;
  double most = 0;
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    most = std::max(most, plot == "goodput" ? m.capacity(i) : m.phases[i].workers);
  }
  if (plot == "goodput") return most * 1.15;
  if (plot == "limit") return most * 4;
  return static_cast<double>(m.deadline) / 1e6;
}

}  // namespace

std::string collapse_plot(const CollapseResult& r, std::string_view plot, bool standalone) {
  const auto* spec =
      std::find_if(kSpecs.begin(), kSpecs.end(), [&](const PlotSpec& s) { return s.name == plot; });
  if (spec == kSpecs.end()) spec = kSpecs.begin();
  std::vector<svg::LegendEntry> entries;
  for (std::size_t i = 0; i < r.series.size(); ++i) {
    if (spec->skip_unlimited && r.series[i].label == "none") continue;
    entries.push_back({svg::colour(i), r.series[i].label, 'l'});
  }
  const double top = 50 + 18.0 * svg::legend_lines(entries, kPlotWidth);
  svg::Canvas c(kWidth, static_cast<int>(top + kPanel + 28), standalone, spec->title);
  svg::legend(c, kLeft, kPlotWidth, 18, entries);
  c.text(kLeft, top - 22, std::string(spec->axis), "start", 11, "#555");
  const double step = seconds(r.bucket);
  const double x_max = step * static_cast<double>(r.series.front().buckets.size());
  const auto ys = svg::ticks(y_top(r, plot), 5);
  svg::Frame f(kLeft, top, kPlotWidth, kPanel, x_max, ys.back());
  f.axes(c, svg::ticks(x_max, 10), ys, true);
  mark_phases(c, f, *r.model, top);
  const auto& first = r.series.front();
  if (plot != "latency") {
    auto ref = column(first, [&](const CollapseBucket& b) {
      return plot == "goodput" ? b.capacity
                               : b.capacity * static_cast<double>(r.model->phases[0].service) / 1e9;
    });
    c.path(f.trace(ref, step, true, false), "#777", "none", 1.2, "5 4");
  }
  for (std::size_t i = 0; i < r.series.size(); ++i) {
    if (spec->skip_unlimited && r.series[i].label == "none") continue;
    auto v = column(r.series[i],
                    [&](const CollapseBucket& b) { return std::min(value(plot, b), ys.back()); });
    c.path(f.trace(v, step, true, false), std::string(svg::colour(i)), "none", 1.6);
  }
  return c.finish();
}

std::string collapse_summary_text(const CollapseResult& r) {
  const CollapseModel& m = *r.model;
  std::string out = fmt::format("{:<34}", "goodput (share of capacity)");
  for (const auto& p : m.phases) {
    out += fmt::format(" {:>17}", fmt::format("{:g}x C={} S={:g}ms", p.load, p.workers,
                                              static_cast<double>(p.service) / 1e6));
  }
  out += "\n";
  for (std::size_t s = 0; s < r.series.size(); ++s) {
    out += fmt::format("{:<34}", r.series[s].label);
    for (std::size_t p = 0; p < m.phases.size(); ++p) {
      const double share = phase_goodput_share(r, s, p);
      out += fmt::format(" {:>11.0f}/s {:>3.0f}%", share * m.capacity(p), 100 * share);
    }
    out += "\n";
  }
  return out;
}

bool write_collapse_csv(const CollapseResult& r, std::FILE* out) {
  std::string buf = "t_us,guard,offered,goodput,refused,timeouts,limit,p99_ms,capacity\n";
  for (const auto& s : r.series) {
    for (std::size_t i = 0; i < s.buckets.size(); ++i) {
      const CollapseBucket& b = s.buckets[i];
      fmt::format_to(std::back_inserter(buf), "{},{},{:g},{:g},{:g},{:g},{:g},{:.3f},{:g}\n",
                     static_cast<core::Nanos>(i) * r.bucket / core::kNanosPerMicro,
                     csv_field(s.label), b.offered, b.goodput, b.refused, b.timeouts, b.limit,
                     b.p99_ms, b.capacity);
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), out);
  return std::fflush(out) == 0 && !std::ferror(out);
}

std::string collapse_html(const CollapseResult& r, const std::string& command,
                          const std::string& generator, std::uint64_t seed) {
  using svg::escape;
  const CollapseModel& m = *r.model;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>sluice simulate: " + escape(m.name) + "</title>\n<style>\n" +
         "body{font-family:sans-serif;max-width:900px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;font-size:.9em}th,td{border-bottom:1px solid #ddd;"
         "padding:.25em .6em;text-align:right}th:first-child,td:first-child{text-align:left}"
         "svg{max-width:100%;height:auto}figcaption{font-size:.85em;color:#555}\n"
         "</style>\n</head>\n<body>\n";
  out +=
      "<h1>sluice simulate: " + escape(m.name) + "</h1>\n<p>" + escape(m.description) + ".</p>\n";
  out += fmt::format(
      "<p>An upstream of C workers, each request S &plusmn; {:g} ms, an unbounded queue; "
      "arrivals evenly spaced (open loop); a client gives up after {:g} ms. Each guard runs on "
      "its own copy; bucket {}, seed {}.</p>\n<p><code>{}</code></p>\n",
      static_cast<double>(m.jitter) / 1e6, static_cast<double>(m.deadline) / 1e6,
      core::format_duration(r.bucket), seed, escape(command));
  out += "<h2>Goodput by phase</h2>\n<table>\n<tr><th>guard</th>";
  for (const auto& p : m.phases) {
    out += fmt::format("<th>{:g}x, C={}, S={:g} ms</th>", p.load, p.workers,
                       static_cast<double>(p.service) / 1e6);
  }
  out += "</tr>\n";
  for (std::size_t s = 0; s < r.series.size(); ++s) {
    out += "<tr><td><code>" + escape(r.series[s].label) + "</code></td>";
    for (std::size_t p = 0; p < m.phases.size(); ++p) {
      const double share = phase_goodput_share(r, s, p);
      out += fmt::format("<td>{:.0f}/s ({:.0f}%)</td>", share * m.capacity(p), 100 * share);
    }
    out += "</tr>\n";
  }
  out += "</table>\n<p>Each phase's mean after its first second, of its capacity.</p>\n";
  for (const auto& spec : kSpecs) {
    out += fmt::format(
        "<h2>{}</h2>\n<figure id=\"{}\">\n{}<figcaption>{}.</figcaption>\n</figure>\n",
        escape(spec.title), spec.name, collapse_plot(r, spec.name, false), escape(spec.axis));
  }
  out += "<footer><p>Made by " + escape(generator) + ".</p></footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace sluice::simulate
