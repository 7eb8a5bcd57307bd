// write_build_info_metric (build_info_metric.hpp). The version and commit need no label
// escaping: cmake/git_commit.cmake admits only [A-Za-z0-9._+~-].
#include "build_info_metric.hpp"

#include "sluice/version.hpp"

namespace sluice::server {

void write_build_info_metric(std::string& out) {
  out.append("# HELP sluice_build_info The running build: version and git commit (always 1).\n");
  out.append("# TYPE sluice_build_info gauge\n");
  out.append("sluice_build_info{version=\"").append(sluice::version());
  out.append("\",commit=\"").append(sluice::git_commit()).append("\"} 1\n");
}

}  // namespace sluice::server
