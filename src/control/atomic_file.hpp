// Replacing a file so that a reader (or a crash) sees the old content or the new, never a
// mix: write a temp file in the same directory, fsync it, rename it over, fsync the directory.
#pragma once

#include <string>
#include <string_view>

#include "sluice/core/expected.hpp"

namespace sluice::control {

// Keeps the file's permission bits (new files: 0644 less the umask). A symlink is followed:
// its target is replaced, the link stays. Errors name the file and the failing step.
core::Expected<bool> write_file_atomically(const std::string& path, std::string_view content);

}  // namespace sluice::control
