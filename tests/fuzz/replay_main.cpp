// Runs a fuzz target's entry point over files, without libFuzzer: the seed corpus and every
// crash ever found (tests/fuzz/regressions/<target>/) replay in the normal build, under g++,
// as ctest `fuzz_replay_<target>`. Arguments are files or folders (each file in a folder, in
// name order). A crash fails the test by crashing; a missing folder is an error, so a renamed
// corpus cannot turn the test into one that replays nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  // A copy of exactly `size` bytes, so that a read past the input is a read past the heap
  // block (as libFuzzer hands it over) rather than into a vector's spare capacity.
  std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_regular_file(arg, ec)) {
      if (!run_file(arg)) return 1;
      ++files;
      continue;
    }
    if (!std::filesystem::is_directory(arg, ec)) {
      std::fprintf(stderr, "fuzz replay: no such file or folder: %s\n", argv[i]);
      return 1;
    }
    std::vector<std::filesystem::path> paths;
    for (const auto& entry : std::filesystem::directory_iterator(arg)) {
      if (entry.is_regular_file()) paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      if (!run_file(p)) return 1;
      ++files;
    }
  }
  if (files == 0) {
    std::fprintf(stderr, "fuzz replay: no input files\n");
    return 1;
  }
  std::printf("fuzz replay: %zu inputs, no crash\n", files);
  return 0;
}
