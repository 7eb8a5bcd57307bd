// A run's totals per limit (admitted, denied, delay percentiles), shared by the text table that
// `sluice simulate` prints and the report's table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/simulate/simulation.hpp"

namespace sluice::simulate {

struct LimitSummary {
  std::string label;
  std::int64_t offered = 0;
  std::int64_t admitted = 0;
  std::int64_t denied = 0;
  std::int64_t delayed = 0;
  std::int64_t passed_late = 0;
  // Delays of admitted requests, µs, as DelayHistogram gives them.
  std::int64_t p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0;
};

std::vector<LimitSummary> summarize(const Result& result);

// "0", "750us", "12.5ms", "1.25s": three significant figures at most.
std::string format_delay(std::int64_t us);

// "12.5%" of a whole; "-" of nothing.
std::string format_share(std::int64_t part, std::int64_t whole);

// The table printed on stdout: one line per limit, columns aligned.
std::string summary_text(const Result& result);

}  // namespace sluice::simulate
