// What both kinds of `sluice simulate` run share for their outputs: the file handle, the one-line
// error (exit status 2) and a whole write checked.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

namespace sluice::cli::simulate_output {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

inline int fail(std::FILE* err, const std::string& message) {
  std::fprintf(err, "sluice simulate: %s\n", message.c_str());
  return 2;
}

inline bool write_all(std::FILE* f, const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), f);
  return std::fflush(f) == 0 && !std::ferror(f);
}

}  // namespace sluice::cli::simulate_output
