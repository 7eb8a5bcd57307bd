// Fuzz target: the limit spec language (spec::parse_limit_spec: `sluice replay --limit`, every
// rule's `limit`, inline checks), then a few decisions of the limit it describes.
//
// A spec that parses must parse again from its canonical text to the same canonical text (the
// engine keys tables by it), and its limit must decide requests at any instant and cost
// without undefined behaviour (UBSan): huge rates, windows and costs included.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "sluice/core/time.hpp"
#include "sluice/local/limit_set.hpp"
#include "sluice/spec/limit_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto spec = sluice::spec::parse_limit_spec(text);
  if (!spec) {
    SLUICE_FUZZ_CHECK(!spec.error().empty(), "a refused spec says why");
    return 0;
  }
  const auto again = sluice::spec::parse_limit_spec(spec->canonical);
  SLUICE_FUZZ_CHECK(again.ok(), "a canonical spec parses");
  SLUICE_FUZZ_CHECK(again->canonical == spec->canonical, "a canonical spec is its own canonical");

  using sluice::core::Nanos;
  // The last instant a trace can name (whole microseconds in int64 nanoseconds).
  constexpr Nanos kEnd = std::numeric_limits<Nanos>::max() / 1000 * 1000;
  const std::vector<sluice::spec::LimitSpec> specs{*spec};
  for (const Nanos max_wait : {Nanos{0}, Nanos{250'000'000}, sluice::core::kForever}) {
    // As replay allows: windows decide in reject mode only, concurrency is not replayed.
    if (spec->wait == sluice::spec::WaitSupport::kNotTimeBased) break;
    if (spec->wait == sluice::spec::WaitSupport::kRejectOnly && max_wait != 0) break;
    sluice::local::LimitSet set(specs, max_wait);
    Nanos now = 0;
    for (const std::int64_t cost :
         {std::int64_t{1}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1} << 40,
          std::numeric_limits<std::int64_t>::max()}) {
      (void)set.decide("k", now, cost);
      now += 1'000'000;
    }
    (void)set.decide("k", kEnd / 2, 1);
    (void)set.decide("k", kEnd, 1);
    (void)set.decide("k", kEnd, 1);
  }
  return 0;
}
