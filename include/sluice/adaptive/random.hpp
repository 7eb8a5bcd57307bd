// The adaptive limits' only source of randomness (Vegas' probe jitter, Envoy's minRTT window
// jitter): a SplitMix64 word kept in the limit's state, so a sequence of samples from a given
// seed always gives the same limits, in a test or a replay.
#pragma once

#include <cstdint>

namespace sluice::adaptive {

struct SplitMix64 {
  std::uint64_t state = 0;

  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [lo, hi), as Java's ThreadLocalRandom.nextDouble(lo, hi): 53 random bits.
  double next_double(double lo, double hi) {
    const double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return lo + unit * (hi - lo);
  }
};

}  // namespace sluice::adaptive
