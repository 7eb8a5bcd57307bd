// The report's three plots of a run, each one SVG: admitted against offered over time (a panel
// per limit), queue delay over time, and each source's share of what each limit admitted.
#pragma once

#include <string>

#include "sluice/simulate/simulation.hpp"

namespace sluice::simulate {

// How the admitted plot draws counts: running totals (a burst is a step, a rate a slope; the
// default, since one burst would flatten a rate plot's scale), or requests per second.
enum class Scale { kCumulative, kRate };

// `standalone`: an .svg file of its own (--svg); else inline in the HTML report.
std::string admitted_plot(const Result& result, Scale scale, bool standalone);
std::string delay_plot(const Result& result, bool standalone);
std::string fairness_plot(const Result& result, bool standalone);

}  // namespace sluice::simulate
