// Sizes of memory as people write them in configs and flags ("64MiB", "16m", "4096"): one
// parser and one formatter, so a value read back after write-back is the same size.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sluice/core/expected.hpp"

namespace sluice::core {

// "64MiB", "16m", "1g", "500000" (bytes); k/m/g = KiB/MiB/GiB (powers of 1024, also written
// KB/MB/GB). Errors name the value and the accepted units.
Expected<std::size_t> parse_bytes(std::string_view text);

// The largest whole unit: 67108864 -> "64MiB", 1536 -> "1536" (bytes when not a whole KiB).
std::string format_bytes(std::size_t bytes);

}  // namespace sluice::core
