// LoopHistogram (sluice/metrics/histogram.hpp): its samples in the exposition's cumulative form.
#include "sluice/metrics/histogram.hpp"

#include <string_view>

namespace sluice::metrics {
namespace {

// kBounds as the `le` label writes them.
constexpr std::string_view kLe[] = {"1e-06",  "5e-06", "1e-05",  "5e-05", "0.0001", "0.00025",
                                    "0.0005", "0.001", "0.0025", "0.005", "0.01",   "0.025",
                                    "0.05",   "0.1",   "0.25",   "1",     "+Inf"};
static_assert(std::size(kLe) == LoopHistogram::kBounds.size() + 1);

}  // namespace

void LoopHistogram::collect(Sink& sink, const Family& family, Label label) const {
  std::uint64_t cumulative = 0;
  const bool labelled = !label.name.empty();
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    const auto n = static_cast<double>(cumulative);
    if (labelled) {
      sink.add(family, "_bucket", {label, {"le", kLe[i]}}, n);
    } else {
      sink.add(family, "_bucket", {{"le", kLe[i]}}, n);
    }
  }
  const double sum = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  if (labelled) {
    sink.add(family, "_sum", {label}, sum);
    sink.add(family, "_count", {label}, static_cast<double>(cumulative));
  } else {
    sink.add(family, "_sum", {}, sum);
    sink.add(family, "_count", {}, static_cast<double>(cumulative));
  }
}

}  // namespace sluice::metrics
