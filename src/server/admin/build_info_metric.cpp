// collect_build_info (build_info_metric.hpp).
#include "build_info_metric.hpp"

#include "sluice/version.hpp"

namespace sluice::server {

void collect_build_info(metrics::Sink& sink) {
  static constexpr metrics::Family kBuildInfo{
      "sluice_build_info", metrics::Kind::kGauge,
      "The running build: version and git commit (always 1)."};
  sink.add(kBuildInfo, {{"version", sluice::version()}, {"commit", sluice::git_commit()}}, 1);
}

}  // namespace sluice::server
