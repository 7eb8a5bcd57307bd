// collect_process_metrics (process_metrics.hpp): /proc/self/stat for CPU, threads and the start
// tick, /proc/self/statm for resident pages, /proc/self/fd for open descriptors, /proc/stat's
// btime for the boot time the start tick counts from (as prometheus/procfs reads them).
#include "process_metrics.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::server {
namespace {

using metrics::Family;
using metrics::Kind;

constexpr Family kCpu{"process_cpu_seconds_total", Kind::kCounter,
                      "User and system CPU time the process has used, in seconds."};
constexpr Family kRss{"process_resident_memory_bytes", Kind::kGauge,
                      "Resident memory of the process, in bytes."};
constexpr Family kFds{"process_open_fds", Kind::kGauge, "Open file descriptors."};
constexpr Family kMaxFds{"process_max_fds", Kind::kGauge,
                         "The limit of open file descriptors (RLIMIT_NOFILE, soft)."};
constexpr Family kThreads{"process_threads", Kind::kGauge, "Threads of the process."};
constexpr Family kStart{"process_start_time_seconds", Kind::kGauge,
                        "When the process started, in seconds since the Unix epoch."};

std::string slurp(const char* path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The fields of /proc/self/stat after the command name (which may hold spaces and parens):
// [0] is field 3 (state), so field N is at [N - 3].
std::vector<std::string> stat_fields() {
  const std::string text = slurp("/proc/self/stat");
  const auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(text.substr(close + 1));
  return {std::istream_iterator<std::string>(rest), std::istream_iterator<std::string>()};
}

std::optional<double> boot_time() {
  std::istringstream in(slurp("/proc/stat"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return std::nullopt;
}

std::optional<double> open_fds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  double n = 0;
  while (const dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n - 1;  // the descriptor opendir itself holds
}

std::optional<double> max_fds() {
  std::istringstream in(slurp("/proc/self/limits"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream f(line.substr(14));
    std::string soft;
    f >> soft;
    return soft == "unlimited" ? std::nullopt : std::optional<double>(std::stod(soft));
  }
  return std::nullopt;
}

}  // namespace

void collect_process_metrics(metrics::Sink& sink) {
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  const auto f = stat_fields();
  // utime 14, stime 15, num_threads 20, starttime 22.
  if (f.size() > 19 && tick > 0) {
    sink.add(kCpu, {}, (std::stod(f[14 - 3]) + std::stod(f[15 - 3])) / tick);
    sink.add(kThreads, {}, std::stod(f[20 - 3]));
    if (const auto boot = boot_time()) sink.add(kStart, {}, *boot + std::stod(f[22 - 3]) / tick);
  }
  std::istringstream statm(slurp("/proc/self/statm"));
  double size = 0, resident = 0;
  if (statm >> size >> resident) {
    sink.add(kRss, {}, resident * static_cast<double>(sysconf(_SC_PAGESIZE)));
  }
  if (const auto n = open_fds()) sink.add(kFds, {}, *n);
  if (const auto n = max_fds()) sink.add(kMaxFds, {}, *n);
}

}  // namespace sluice::server
