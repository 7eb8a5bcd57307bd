// AccessLog (access_log.hpp).
#include "access_log.hpp"

#include "sluice/log/log.hpp"

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

void AccessLog::write(std::string_view destination, config::AccessLogFormat format,
                      AccessFields fields) {
  if (destination.empty()) return;
  fields.time_ms = wall_.now() / core::kNanosPerMilli;
  thread_local std::string line;
  line.clear();
  format_access_line(fields, format, line);

  std::lock_guard lock(mu_);
  if (destination != destination_) open(destination);
  if (file_ == nullptr) {
    if (!warned_) {
      log::error("sluice: cannot open access log " + destination_);
      warned_ = true;
    }
    return;
  }
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

}  // namespace sluice::server::gateway
