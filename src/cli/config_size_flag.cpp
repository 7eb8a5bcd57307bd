// max_config_size_flag (config_size_flag.hpp).
#include "config_size_flag.hpp"

#include "sluice/config/loader.hpp"
#include "sluice/core/byte_size.hpp"

namespace sluice::cli {

namespace {
constexpr std::size_t kMin = std::size_t{1} << 10;
constexpr std::size_t kMax = std::size_t{1} << 30;  // the YAML tree indexes text in 32 bits
}  // namespace

std::optional<std::size_t> max_config_size_flag(const std::string& text, const char* command,
                                                std::FILE* err) {
  if (text.empty()) return config::kDefaultMaxConfigSize;
  auto size = core::parse_bytes(text);
  if (size && (*size < kMin || *size > kMax)) {
    size = core::make_error("size '" + text + "' is out of range (accepted: 1KiB to 1GiB)");
  }
  if (!size) {
    std::fprintf(err, "sluice %s: --max-config-size: %s\n", command, size.error().c_str());
    return std::nullopt;
  }
  return *size;
}

}  // namespace sluice::cli
