// The exponential average Netflix's Gradient2Limit keeps of the RTT (concurrency-limits-core
// limit/measurement/ExpAvgMeasurement.java): a plain mean over the first warmup samples, then
// value = value x (1 - f) + sample x f with f = 2 / (window + 1).
#pragma once

#include <type_traits>

namespace sluice::adaptive {

struct ExpAvg {
  double value = 0;
  double sum = 0;
  int count = 0;

  double add(double sample, int window, int warmup) {
    if (count < warmup) {
      count++;
      sum += sample;
      value = sum / count;
    } else {
      const double factor = 2.0 / (window + 1);
      value = value * (1 - factor) + sample * factor;
    }
    return value;
  }
};
static_assert(sizeof(ExpAvg) == 24 && std::is_trivially_copyable_v<ExpAvg>);

}  // namespace sluice::adaptive
