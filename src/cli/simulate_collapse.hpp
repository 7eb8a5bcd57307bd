// `sluice simulate --scenario collapse*`: the collapse model (sluice/simulate/collapse.hpp)
// behind each guard, into a summary on stdout and the report, CSV and plots on request.
#pragma once

#include <cstdio>

#include "simulate_command.hpp"
#include "sluice/simulate/collapse.hpp"

namespace sluice::cli {

// As run_simulate: 0; 2 after one line naming a bad argument; 1 when an output failed.
int run_collapse(const SimulateOptions& o, const simulate::CollapseModel& model, std::FILE* out,
                 std::FILE* err);

}  // namespace sluice::cli
