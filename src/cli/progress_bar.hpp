// A progress bar on stderr for long runs of `sluice simulate`: drawn on a terminal once a run
// has taken half a second (or from the start when asked for), redrawn at most ten times a
// second, erased at the end on a terminal.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace sluice::cli {

class ProgressBar {
 public:
  enum class When { kAuto, kAlways, kNever };

  // `total` is what 100% stands for, shown beside the percentage ("10s").
  ProgressBar(std::FILE* out, When when, std::string total);

  void update(double fraction);
  // The bar at 100%, then erased (on a terminal) or ended with a newline.
  void finish();

 private:
  void draw(double fraction);

  std::FILE* out_;
  bool enabled_;
  bool terminal_;
  bool immediate_;
  bool drawn_ = false;
  std::string total_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace sluice::cli
