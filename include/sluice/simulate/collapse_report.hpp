// What `sluice simulate --scenario collapse*` writes: a summary table (goodput per phase and
// guard), three plots (goodput, limit, p99 of answers over time), a CSV and the HTML report.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "sluice/simulate/collapse.hpp"

namespace sluice::simulate {

// The plots' names, as --svg files are named: PREFIX-goodput.svg and so on.
inline constexpr std::array<std::string_view, 3> kCollapsePlots{"goodput", "limit", "latency"};

// `plot`: one of kCollapsePlots; `standalone`: an .svg file of its own, else inline in HTML.
std::string collapse_plot(const CollapseResult& r, std::string_view plot, bool standalone);

// Per guard and phase: goodput (mean of the phase's buckets after its first second) and its
// share of the phase's capacity, the limit at the phase's end.
std::string collapse_summary_text(const CollapseResult& r);

// One row per bucket and guard (docs/simulate.md lists the columns).
bool write_collapse_csv(const CollapseResult& r, std::FILE* out);

// `command` and `generator` as for the traffic report (html_report.hpp's ReportInfo).
std::string collapse_html(const CollapseResult& r, const std::string& command,
                          const std::string& generator, std::uint64_t seed);

}  // namespace sluice::simulate
