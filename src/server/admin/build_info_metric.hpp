// sluice_build_info: the Prometheus convention for "which build is running" (a gauge of 1
// whose labels carry the version and commit), the same text `sluice --version` prints.
#pragma once

#include "sluice/metrics/registry.hpp"

namespace sluice::server {

// The one sample, in the registry's collection.
void collect_build_info(metrics::Sink& sink);

}  // namespace sluice::server
