// `sluice check-config FILE`: validates a config without serving it (DESIGN.md). Exit 0 with
// "FILE: ok" on stdout, or 2 with every error as "FILE:LINE: problem" on stderr.
#pragma once

#include <cstdio>
#include <string>

namespace sluice::cli {

int run_check_config(const std::string& path, std::FILE* out, std::FILE* err);

}  // namespace sluice::cli
