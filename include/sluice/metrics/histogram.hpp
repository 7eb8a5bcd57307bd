// A latency histogram with fixed buckets written by one thread (an event loop) and read by any
// scrape: each observation is a few relaxed loads and stores, no lock, no allocation, no
// read-modify-write. The registry sums the loops' histograms of one family.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "sluice/core/time.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::metrics {

class LoopHistogram {
 public:
  // Upper bounds of the buckets, in seconds: 1 us (a decision in this process) to 1 s (a Redis
  // call past any sane timeout).
  static constexpr std::array<double, 16> kBounds = {1e-6, 5e-6, 1e-5,   5e-5, 1e-4, 2.5e-4,
                                                     5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2,
                                                     5e-2, 0.1,  0.25,   1};

  // The loop's thread only. A negative duration (a clock that stepped) counts as 0.
  void observe(core::Nanos d) {
    if (d < 0) d = 0;
    std::size_t i = 0;
    while (i < kBounds.size() && static_cast<double>(d) > kBounds[i] * 1e9) ++i;
    bump(buckets_[i], 1);
    bump(sum_ns_, static_cast<std::uint64_t>(d));
  }

  // Any thread: `family`'s _bucket, _sum and _count samples, with `label` on each (none when
  // its name is empty).
  void collect(Sink& sink, const Family& family, Label label = {}) const;

 private:
  static void bump(std::atomic<std::uint64_t>& c, std::uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> buckets_{};  // the last is +Inf
  std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace sluice::metrics
