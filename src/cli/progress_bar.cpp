// ProgressBar (progress_bar.hpp).
#include "progress_bar.hpp"

#include <unistd.h>

#include <algorithm>

namespace sluice::cli {
namespace {

constexpr auto kFirstAfter = std::chrono::milliseconds(500);
constexpr auto kEvery = std::chrono::milliseconds(100);
constexpr int kCells = 30;

}  // namespace

ProgressBar::ProgressBar(std::FILE* out, When when, std::string total)
    : out_(out),
      enabled_(when == When::kAlways || (when == When::kAuto && isatty(fileno(out)) == 1)),
      terminal_(isatty(fileno(out)) == 1),
      immediate_(when == When::kAlways),
      total_(std::move(total)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressBar::update(double fraction) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!immediate_ && now - start_ < kFirstAfter) return;
  if (drawn_ && now - last_ < kEvery) return;
  last_ = now;
  draw(fraction);
}

void ProgressBar::finish() {
  if (!enabled_ || (!drawn_ && !immediate_)) return;
  draw(1.0);
  if (terminal_) {
    std::fprintf(out_, "\r%*s\r", kCells + 40 + static_cast<int>(total_.size()), "");
  } else {
    std::fputc('\n', out_);
  }
  std::fflush(out_);
}

void ProgressBar::draw(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kCells);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kCells - filled), '.');
  std::fprintf(out_, "\rsluice simulate [%s] %3d%% of %s", bar.c_str(),
               static_cast<int>(fraction * 100), total_.c_str());
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace sluice::cli
