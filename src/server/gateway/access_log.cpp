// AccessLog (access_log.hpp).
#include "access_log.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace sluice::server::gateway {

AccessLog::~AccessLog() {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
}

void AccessLog::open(std::string_view destination) {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
  file_ = nullptr;
  destination_ = destination;
  warned_ = false;
  if (destination_ == "stdout") {
    file_ = stdout;
  } else if (!destination_.empty()) {
    file_ = std::fopen(destination_.c_str(), "a");
  }
}

void AccessLog::write(std::string_view destination, const AccessRecord& r) {
  if (destination.empty()) return;
  const std::int64_t ms = wall_.now() / core::kNanosPerMilli;
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::string line =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z {} {} {} {} {} ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000,
                  r.client.empty() ? "-" : r.client, r.method.empty() ? "-" : r.method,
                  r.target.empty() ? "-" : r.target, r.status, r.bytes);
  if (r.upstream_ms < 0) {
    line += "-";
  } else {
    line += fmt::format("{:.1f}", r.upstream_ms);
  }
  line += ' ';
  line += r.decision;
  if (r.dry_run_denied) line += " dry-run-denied";
  line += '\n';

  std::lock_guard lock(mu_);
  if (destination != destination_) open(destination);
  if (file_ == nullptr) {
    if (!warned_) {
      std::fprintf(stderr, "sluice: cannot open access log %s\n", destination_.c_str());
      warned_ = true;
    }
    return;
  }
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

}  // namespace sluice::server::gateway
