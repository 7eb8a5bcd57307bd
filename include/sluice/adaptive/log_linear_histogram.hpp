// The latency histogram Envoy's gradient controller aggregates samples in (libcircllhist,
// src/circllhist.c): log-linear bins of two significant decimal digits, and its type-1
// approximate quantile (hist_approx_quantile), so a percentile of a window is the value Envoy
// computes. Fixed size (901 bins of whole microseconds), no allocation: 3.6 KB per limit.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace sluice::adaptive {

class LogLinearHistogram {
 public:
  // Bins for whole microseconds up to 10^10 (2.8 hours); a longer value counts in the top bin.
  static constexpr int kDecades = 10;
  static constexpr int kBins = 1 + kDecades * 90;

  void insert(std::int64_t micros) {
    auto& c = counts_[bin_of(micros)];
    if (c != UINT32_MAX) {
      c++;
      total_++;
    }
  }
  std::uint32_t count() const { return total_; }
  void clear() {
    counts_.fill(0);
    total_ = 0;
  }

  // hist_approx_quantile for one q in [0, 1]: walk the bins to the one holding q x total, then
  // place the k-th of its n values at left + k / (n + 1) x width (k = ceil of the rank within
  // the bin; 1 for a rank of 0). 0 for an empty histogram (circllhist gives NaN; Envoy never
  // asks an empty one).
  double quantile(double q) const {
    if (total_ == 0) return 0;
    const double qn = static_cast<double>(total_) * q;
    int b = next_used(-1);
    double lower = 0;
    double upper = counts_[b];
    for (int n = next_used(b); n < kBins && upper < qn; n = next_used(n)) {
      b = n;
      lower = upper;
      upper = lower + counts_[b];
    }
    if (b == 0) return 0;  // the zero bin has no width
    const std::uint64_t n = counts_[b];
    double k = std::ceil(qn - lower);
    if (k == 0) k = 1;
    return left(b) + k / static_cast<double>(n + 1) * width(b);
  }

  // The bin of a value: 0 for 0 (and below); else 1 + 90 x decade + (two leading digits - 10),
  // a value under 10 counting as its digit times ten (3 is bin [3.0, 3.1), as circllhist has it).
  static int bin_of(std::int64_t micros) {
    if (micros <= 0) return 0;
    int decade = 0;
    std::int64_t v = micros;
    if (v < 10) {
      v *= 10;
    } else {
      while (v >= 100) {
        v /= 10;
        decade++;
      }
      decade++;
    }
    if (decade >= kDecades) return kBins - 1;
    return 1 + 90 * decade + static_cast<int>(v - 10);
  }
  // hist_bucket_to_double and hist_bucket_to_double_bin_width, in the same double arithmetic.
  static double left(int bin) {
    const int i = bin - 1;
    return (static_cast<double>(i % 90 + 10) / 10.0) * std::pow(10.0, i / 90);
  }
  static double width(int bin) { return std::pow(10.0, (bin - 1) / 90) / 10.0; }

 private:
  int next_used(int after) const {
    int i = after + 1;
    while (i < kBins && counts_[i] == 0) i++;
    return i;
  }

  std::array<std::uint32_t, kBins> counts_{};
  std::uint32_t total_ = 0;
};
static_assert(std::is_trivially_copyable_v<LogLinearHistogram>);

}  // namespace sluice::adaptive
