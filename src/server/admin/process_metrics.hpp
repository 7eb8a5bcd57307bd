// The process_* series of the Prometheus client libraries' process collector (resident memory,
// open fds, CPU, threads, start time), read from /proc/self at scrape time: Linux only.
#pragma once

#include "sluice/metrics/registry.hpp"

namespace sluice::server {

// The samples, in the registry's collection. A file of /proc it cannot read leaves its series
// out of that scrape rather than writing a made-up 0.
void collect_process_metrics(metrics::Sink& sink);

}  // namespace sluice::server
