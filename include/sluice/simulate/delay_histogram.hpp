// Delays of admitted requests, for percentiles. The first 65,536 are kept as they are (512 KiB),
// so the percentiles of a run of that size are exact; past that they are counted in log-linear
// buckets instead: exact below 128 µs, then 64 buckets per doubling (within 1.6%), 3,712
// counters (29 KiB) for any delay up to 2^63 µs, however many requests a run has. The largest
// delay is always exact.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace sluice::simulate {

class DelayHistogram {
 public:
  void add(std::int64_t delay_us);

  // The delay at or below which a fraction `q` (0..1] of the added delays lie: the added delay
  // of that rank while they are kept, else the upper edge of its bucket (never below the true
  // value, at most 1.6% above it, never above max()). 0 when nothing was added.
  std::int64_t quantile(double q) const;

  std::int64_t count() const { return count_; }
  std::int64_t max() const { return max_; }

  static constexpr std::size_t kKept = 1 << 16;

 private:
  static constexpr int kSubBits = 6;            // 64 buckets per doubling
  static constexpr int kExact = 2 << kSubBits;  // 0..127 exact
  static constexpr int kBuckets = kExact + (63 - kSubBits - 1) * (1 << kSubBits);
  static int bucket_of(std::int64_t v);
  static std::int64_t upper_edge(int bucket);
  void count_in_buckets(std::int64_t delay_us);

  std::vector<std::int64_t> kept_;
  bool bucketed_ = false;
  std::array<std::int64_t, kBuckets> counts_{};
  std::int64_t count_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace sluice::simulate
