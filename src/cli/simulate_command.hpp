// `sluice simulate`: synthetic traffic (a scenario) through several limits side by side, into a
// summary on stdout and, on request, an HTML report with SVG plots, a CSV of the series, the
// plots as .svg files and the generated trace. docs/simulate.md is its manual.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace sluice::cli {

struct SimulateOptions {
  std::string scenario;             // a built-in's name or a file
  std::vector<std::string> limits;  // empty: the scenario's own
  std::string duration;             // empty: the scenario's
  std::string bucket;               // empty: the scenario's, or chosen from the duration
  std::string seed = "1";
  std::string mode = "reject";
  std::string max_wait;
  std::string out;    // the HTML report
  std::string csv;    // the series
  std::string svg;    // PREFIX of PREFIX-admitted.svg, PREFIX-delay.svg, PREFIX-fairness.svg
  std::string trace;  // the generated requests, as `sluice replay` reads them
  std::string progress = "auto";
  std::string plot = "cumulative";  // or "rate": how the admitted plot draws counts
  bool list_scenarios = false;
  std::string print_scenario;
  std::string command;    // the command line, for the report
  std::string generator;  // "sluice VERSION (commit ...)", for the report
};

// Returns the exit status: 0; 2 after one line on `err` naming a bad argument or scenario line;
// 1 when an output file could not be written.
int run_simulate(const SimulateOptions& options, std::FILE* out, std::FILE* err);

// The command line as a shell would take it back (words quoted where they need it).
std::string shell_words(int argc, char** argv);

}  // namespace sluice::cli
