// html_report (sluice/simulate/html_report.hpp): facts, sources, summary, the plots, fairness.
#include "sluice/simulate/html_report.hpp"

#include <fmt/format.h>

#include <iterator>

#include "sluice/simulate/plots.hpp"
#include "sluice/simulate/summary.hpp"
#include "sluice/simulate/svg.hpp"

namespace sluice::simulate {
namespace {

using svg::escape;

constexpr std::string_view kStyle =
    R"(body{font-family:sans-serif;max-width:900px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}
td.text{text-align:left}code{font-size:.95em}
figure{margin:1em 0}figcaption{font-size:.85em;color:#555;max-width:860px}
.facts th{text-align:left;font-weight:normal;color:#555}
svg{max-width:100%;height:auto})";

std::string cell(std::string_view text, bool text_cell = false) {
  return std::string(text_cell ? "<td class=\"text\">" : "<td>") + escape(text) + "</td>";
}

std::string facts(const Scenario& sc, const Result& r, const ReportInfo& info) {
  std::string out = "<table class=\"facts\">\n";
  auto row = [&](std::string_view name, const std::string& value) {
    out += "<tr><th>" + std::string(name) + "</th>" + cell(value, true) + "</tr>\n";
  };
  row("scenario", sc.name + (sc.description.empty() ? "" : ": " + sc.description));
  row("duration", core::format_duration(r.duration));
  row("requests", std::to_string(r.requests));
  row("bucket", core::format_duration(r.bucket));
  row("mode", info.mode);
  row("seed", std::to_string(info.seed));
  out += "<tr><th>command</th><td class=\"text\"><code>" + escape(info.command) +
         "</code></td></tr>\n</table>\n";
  return out;
}

std::string sources_table(const Scenario& sc, const Result& r) {
  std::string out =
      "<table>\n<tr><th>source</th><th>traffic</th><th>key</th><th>requests</th></tr>\n";
  for (std::size_t i = 0; i < sc.sources.size(); ++i) {
    const Source& s = sc.sources[i];
    const std::string key =
        s.keys == 1 ? s.key : s.key + "-0 .. " + s.key + "-" + std::to_string(s.keys - 1);
    out += "<tr>" + cell(s.name) + cell(describe(s), true) + cell(key, true) +
           cell(std::to_string(r.offered_by_source[i])) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string summary_table(const Result& r) {
  std::string out =
      "<table>\n<tr><th>limit</th><th>admitted</th><th>denied</th><th>share</th>"
      "<th>delayed</th><th>delay p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n";
  for (const auto& s : summarize(r)) {
    out += "<tr><td><code>" + escape(s.label) + "</code></td>" + cell(std::to_string(s.admitted)) +
           cell(std::to_string(s.denied)) + cell(format_share(s.admitted, s.offered)) +
           cell(std::to_string(s.delayed)) + cell(format_delay(s.p50_us)) +
           cell(format_delay(s.p90_us)) + cell(format_delay(s.p99_us)) +
           cell(format_delay(s.max_us)) + "</tr>\n";
  }
  return out + "</table>\n";
}

// Per limit and source: admitted of offered, and the source's share of what the limit admitted.
std::string fairness_table(const Result& r) {
  std::string out = "<table>\n<tr><th>limit</th>";
  for (const auto& s : r.sources) out += "<th>" + escape(s) + "</th>";
  out += "</tr>\n<tr><td>offered</td>";
  for (auto n : r.offered_by_source) out += cell(std::to_string(n));
  out += "</tr>\n";
  for (const auto& l : r.limits) {
    out += "<tr><td><code>" + escape(l.label) + "</code></td>";
    for (std::size_t s = 0; s < r.sources.size(); ++s) {
      out += cell(std::to_string(l.admitted_by_source[s]) + " (" +
                  format_share(l.admitted_by_source[s], r.offered_by_source[s]) + ")");
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string figure(std::string_view id, const std::string& plot, std::string_view caption) {
  return fmt::format(
      "<figure class=\"plot\" id=\"{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n", id, plot,
      caption);
}

std::string late_note(const Result& r) {
  std::string out;
  for (const auto& l : r.limits) {
    if (l.passed_late == 0) continue;
    out += "<p><code>" + escape(l.label) + "</code>: " + std::to_string(l.passed_late) +
           " admitted requests proceed after the plot's end (twice the run).</p>\n";
  }
  return out;
}

}  // namespace

std::string html_report(const Scenario& sc, const Result& r, const ReportInfo& info) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>sluice simulate: " + escape(sc.name) + "</title>\n<style>\n" +
         std::string(kStyle) + "\n</style>\n</head>\n<body>\n";
  out += "<h1>sluice simulate: " + escape(sc.name) + "</h1>\n" + facts(sc, r, info);
  out += "<h2>Sources</h2>\n" + sources_table(sc, r);
  out +=
      "<h2>Limits</h2>\n<p>Each limit decides the same requests on its own; each key has its "
      "own state in each limit. Delays are of admitted requests.</p>\n" +
      summary_table(r);
  out += late_note(r);
  out += "<h2>Admitted against offered</h2>\n" +
         figure("admitted", admitted_plot(r, info.scale, false),
                std::string(info.scale == Scale::kRate ? "Requests per second in each bucket: "
                                                       : "Running totals: ") +
                    "per limit, what was offered (grey), what it admitted as requests arrived, "
                    "and, where it delayed requests, when they proceed (dashed).");
  out += "<h2>Queue delay</h2>\n" +
         figure("delay", delay_plot(r, false),
                "The longest delay of the requests each limit admitted in each bucket of time.");
  out += "<h2>Fairness</h2>\n" +
         figure("fairness", fairness_plot(r, false),
                "Each source's share of the requests offered, and of those each limit admitted.") +
         fairness_table(r);
  out += "<footer><p>Made by " + escape(info.generator) + ".</p></footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace sluice::simulate
