// The access log: one line per request, to stdout or a file, as RuleSet::access_log says, in
// its format (access_line.hpp makes the line). The destination is looked up per line, so a
// reload that changes it takes effect at once.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "access_line.hpp"
#include "sluice/core/clock.hpp"

namespace sluice::server::gateway {

// Thread-safe: every worker loop writes through one instance.
class AccessLog {
 public:
  // `wall`: the time each line is stamped with.
  explicit AccessLog(const core::Clock& wall) : wall_(wall) {}
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // `destination`: "" (off, nothing written), "stdout", or a file path (appended to). The line
  // is stamped with the wall clock (`fields.time_ms` is set here) and made in a buffer kept per
  // thread, so a line allocates nothing once its buffer has grown.
  void write(std::string_view destination, config::AccessLogFormat format, AccessFields fields);

 private:
  void open(std::string_view destination);

  const core::Clock& wall_;
  std::mutex mu_;
  std::string destination_;
  std::FILE* file_ = nullptr;
  bool warned_ = false;
};

}  // namespace sluice::server::gateway
