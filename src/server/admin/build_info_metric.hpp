// sluice_build_info: the Prometheus convention for "which build is running" (a gauge of 1
// whose labels carry the version and commit), the same text `sluice --version` prints.
#pragma once

#include <string>

namespace sluice::server {

// Appends the family (HELP, TYPE and the one sample) to a /metrics body.
void write_build_info_metric(std::string& out);

}  // namespace sluice::server
