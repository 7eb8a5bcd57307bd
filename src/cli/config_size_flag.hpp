// `--max-config-size SIZE` of `serve` and `check-config`: the cap on a config file's size. A
// flag, not a config field, because the cap must hold before the file is read: a field could
// only raise the limit of the very file that is too big to read.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace sluice::cli {

// "" is the default (16MiB). Accepted: 1KiB to 1GiB, in the config's size syntax ("64MiB").
// Prints the problem as "sluice COMMAND: --max-config-size: ..." on `err` and returns nullopt.
std::optional<std::size_t> max_config_size_flag(const std::string& text, const char* command,
                                                std::FILE* err);

}  // namespace sluice::cli
