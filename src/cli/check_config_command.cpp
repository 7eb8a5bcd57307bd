// `sluice check-config` (check_config_command.hpp): load each file, report every error.
#include "check_config_command.hpp"

#include "sluice/config/loader.hpp"

namespace sluice::cli {

int run_check_config(const std::vector<std::string>& paths, std::FILE* out, std::FILE* err) {
  int status = 0;
  for (const auto& path : paths) {
    const config::Loaded loaded = config::load_any_file(path);
    if (loaded.errors.empty()) {
      std::fprintf(out, "%s: ok\n", path.c_str());
      continue;
    }
    for (const auto& e : loaded.errors) std::fprintf(err, "%s\n", e.format().c_str());
    status = 2;
  }
  return status;
}

}  // namespace sluice::cli
