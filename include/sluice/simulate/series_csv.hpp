// The series of a run as CSV (`sluice simulate --csv`): a header, then one row per bucket of time,
// limit and source, with the counts of simulation.hpp's Cell (docs/simulate.md lists the columns).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "sluice/simulate/simulation.hpp"

namespace sluice::simulate {

// RFC 4180 quoting where a field needs it (a limit spec has commas).
std::string csv_field(std::string_view text);

// Writes the whole series; false if the stream reports an error.
bool write_series_csv(const Result& result, std::FILE* out);

}  // namespace sluice::simulate
