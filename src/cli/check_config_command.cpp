// `sluice check-config` (check_config_command.hpp): load each file, report every error.
#include "check_config_command.hpp"

#include "config_size_flag.hpp"
#include "sluice/config/loader.hpp"

namespace sluice::cli {

int run_check_config(const std::vector<std::string>& paths, const std::string& max_config_size,
                     std::FILE* out, std::FILE* err) {
  const auto cap = max_config_size_flag(max_config_size, "check-config", err);
  if (!cap) return 2;
  int status = 0;
  for (const auto& path : paths) {
    const config::Loaded loaded = config::load_any_file(path, *cap);
    if (loaded.errors.empty()) {
      // Warnings do not fail the check: the file loads, and serve would run it.
      for (const auto& w : config::warnings(*loaded.rules, path)) {
        std::fprintf(err, "%s\n", w.format().c_str());
      }
      std::fprintf(out, "%s: ok\n", path.c_str());
      continue;
    }
    for (const auto& e : loaded.errors) std::fprintf(err, "%s\n", e.format().c_str());
    status = 2;
  }
  return status;
}

}  // namespace sluice::cli
