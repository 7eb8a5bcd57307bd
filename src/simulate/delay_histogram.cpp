// DelayHistogram (sluice/simulate/delay_histogram.hpp): the delays kept, then buckets of the
// exponent and the next 6 bits.
#include "sluice/simulate/delay_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace sluice::simulate {

// v < 128: bucket v. Else v has its top bit at e >= 7; the bucket is the run of 64 for e, and
// within it the 6 bits after the top one.
int DelayHistogram::bucket_of(std::int64_t v) {
  if (v < kExact) return static_cast<int>(std::max<std::int64_t>(v, 0));
  const auto u = static_cast<std::uint64_t>(v);
  const int e = 63 - std::countl_zero(u);
  const auto sub = static_cast<int>((u >> (e - kSubBits)) & ((1u << kSubBits) - 1));
  return kExact + (e - kSubBits - 1) * (1 << kSubBits) + sub;
}

std::int64_t DelayHistogram::upper_edge(int bucket) {
  if (bucket < kExact) return bucket;
  const int run = (bucket - kExact) >> kSubBits;
  const int sub = (bucket - kExact) & ((1 << kSubBits) - 1);
  const int e = run + kSubBits + 1;
  const std::uint64_t base =
      (std::uint64_t{1} << e) | (static_cast<std::uint64_t>(sub) << (e - kSubBits));
  const std::uint64_t top = base + (std::uint64_t{1} << (e - kSubBits)) - 1;
  return static_cast<std::int64_t>(std::min<std::uint64_t>(top, INT64_MAX));
}

void DelayHistogram::count_in_buckets(std::int64_t delay_us) {
  ++counts_[static_cast<std::size_t>(bucket_of(delay_us))];
}

void DelayHistogram::add(std::int64_t delay_us) {
  ++count_;
  max_ = std::max(max_, delay_us);
  if (!bucketed_ && kept_.size() < kKept) {
    kept_.push_back(delay_us);
    return;
  }
  if (!bucketed_) {
    for (auto d : kept_) count_in_buckets(d);
    kept_ = {};
    bucketed_ = true;
  }
  count_in_buckets(delay_us);
}

std::int64_t DelayHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count_))), 1, count_);
  if (!bucketed_) {
    std::vector<std::int64_t> sorted = kept_;
    auto nth = sorted.begin() + (rank - 1);
    std::nth_element(sorted.begin(), nth, sorted.end());
    return *nth;
  }
  std::int64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[static_cast<std::size_t>(b)];
    if (seen >= rank) return std::min(upper_edge(b), max_);
  }
  return max_;
}

}  // namespace sluice::simulate
