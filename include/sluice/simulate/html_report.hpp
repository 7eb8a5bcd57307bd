// The report of `sluice simulate --out`: one self-contained HTML page (inline CSS and SVG, no
// script, no external reference) with the run's facts, its tables and its three plots.
#pragma once

#include <cstdint>
#include <string>

#include "sluice/simulate/plots.hpp"
#include "sluice/simulate/scenario.hpp"
#include "sluice/simulate/simulation.hpp"

namespace sluice::simulate {

struct ReportInfo {
  std::string command;    // the command line that made the report, to run it again
  std::string generator;  // "sluice 0.1.0 (commit ...)"
  std::string mode;       // "reject", "wait (max-wait 500ms)"
  std::uint64_t seed = 1;
  Scale scale = Scale::kCumulative;
};

std::string html_report(const Scenario& scenario, const Result& result, const ReportInfo& info);

}  // namespace sluice::simulate
