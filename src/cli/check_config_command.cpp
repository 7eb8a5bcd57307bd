// `sluice check-config` (check_config_command.hpp): load the file, report every error.
#include "check_config_command.hpp"

#include "sluice/config/loader.hpp"

namespace sluice::cli {

int run_check_config(const std::string& path, std::FILE* out, std::FILE* err) {
  const config::Loaded loaded = config::load_config_file(path);
  if (loaded.errors.empty()) {
    std::fprintf(out, "%s: ok\n", path.c_str());
    return 0;
  }
  for (const auto& e : loaded.errors) std::fprintf(err, "%s\n", e.format().c_str());
  return 2;
}

}  // namespace sluice::cli
