// The access log: one line per request, to stdout or a file, as RuleSet::access_log says. The
// destination is looked up per line, so a reload that changes it takes effect at once.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "sluice/core/clock.hpp"

namespace sluice::server::gateway {

// The fields of one line, in the order they are written:
//   time client method target status bytes upstream_ms decision
// e.g. `2024-05-01T12:00:00.123Z 10.0.0.7 GET /api/x 200 1234 3.2 forward`.
struct AccessRecord {
  std::string_view client;
  std::string_view method;
  std::string_view target;
  int status = 0;
  std::uint64_t bytes = 0;      // response body bytes sent to the client
  double upstream_ms = -1;      // < 0: not proxied ("-")
  std::string_view decision;    // forward, delay, reject, missing-key, respond, noroute, error
  bool dry_run_denied = false;  // a dry-run rule would have refused it: " dry-run-denied"
};

// Thread-safe: every worker loop writes through one instance.
class AccessLog {
 public:
  // `wall`: the time each line is stamped with.
  explicit AccessLog(const core::Clock& wall) : wall_(wall) {}
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // `destination`: "" (off, nothing written), "stdout", or a file path (appended to).
  void write(std::string_view destination, const AccessRecord& record);

 private:
  void open(std::string_view destination);

  const core::Clock& wall_;
  std::mutex mu_;
  std::string destination_;
  std::FILE* file_ = nullptr;
  bool warned_ = false;
};

}  // namespace sluice::server::gateway
