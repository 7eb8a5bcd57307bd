// `sluice replay`: runs a trace of requests through limits and writes one decision per line.
// The contract (arguments, formats, errors, exit status 2) is DESIGN.md's "sluice replay".
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace sluice::cli {

struct ReplayOptions {
  std::vector<std::string> limits;
  std::string mode = "reject";
  std::string max_wait;  // empty: unbounded in wait mode
  std::string store = "local";
  std::string zone;  // empty: exact, unbounded per-key state; else each limit's table budget
};

// Returns the process exit status: 0, or 2 after one line on `err` naming the problem.
int run_replay(const ReplayOptions& options, std::FILE* in, std::FILE* out, std::FILE* err);

}  // namespace sluice::cli
