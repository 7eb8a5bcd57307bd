// `sluice check-config FILE...`: validates configs without serving them (DESIGN.md): main
// configs (with the RLS files they name) and envoyproxy/ratelimit RLS files. Exit 0 with
// "FILE: ok" on stdout for each, or 2 with every error as "FILE:LINE: problem" on stderr.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace sluice::cli {

// `max_config_size`: the --max-config-size flag as given ("" for the default).
int run_check_config(const std::vector<std::string>& paths, const std::string& max_config_size,
                     std::FILE* out, std::FILE* err);

}  // namespace sluice::cli
