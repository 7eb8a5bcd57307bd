// Fuzz target: the replay trace reader (src/replay/trace_reader.cpp) over a whole trace, then
// each request through one limit of every algorithm, as `sluice replay` runs them.
//
// The reader reads from a FILE (fmemopen), so its buffering and line growth are what replay
// uses. Every request it gives must keep the contract (non-decreasing time, a cost of at
// least 1, a key with no comma), and an error must name a line; the decisions then meet
// whatever times and costs a trace can hold.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "sluice/core/time.hpp"
#include "sluice/local/limit_set.hpp"
#include "sluice/replay/trace_reader.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace {

// One limit of each time-based algorithm, a fresh state per trace (as each replay starts).
const std::vector<sluice::spec::LimitSpec>& specs() {
  static const auto* all = [] {
    auto* out = new std::vector<sluice::spec::LimitSpec>;
    for (const char* text : {"token-bucket:rate=10/s,burst=20", "gcra:rate=30/60s,burst=15",
                             "leaky-bucket:rate=200/m,burst=3,delay=1", "queue:rate=3/s",
                             "smooth-bursty:rate=5/s", "smooth-warmup:rate=4/s,warmup=1s"}) {
      auto s = sluice::spec::parse_limit_spec(text);
      SLUICE_FUZZ_CHECK(s.ok(), "the fuzzer's own specs parse");
      out->push_back(*s);
    }
    return out;
  }();
  return *all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;  // fmemopen refuses an empty buffer
  std::FILE* in = fmemopen(const_cast<std::uint8_t*>(data), size, "rb");
  if (in == nullptr) return 0;
  sluice::replay::TraceReader reader(in);
  sluice::local::LimitSet wait(specs(), 250'000'000);
  sluice::local::LimitSet windows(
      {*sluice::spec::parse_limit_spec("sliding-window:limit=7,window=500ms"),
       *sluice::spec::parse_limit_spec("fixed-window:limit=3,window=1s")},
      0);
  std::int64_t last_t = 0;
  std::int64_t last_line = 0;
  while (auto r = reader.next()) {
    SLUICE_FUZZ_CHECK(r->t_us >= last_t, "time never goes back");
    SLUICE_FUZZ_CHECK(r->t_us <= std::numeric_limits<std::int64_t>::max() / 1000,
                      "a time fits int64 nanoseconds");
    SLUICE_FUZZ_CHECK(r->cost >= 1, "a cost is at least 1");
    SLUICE_FUZZ_CHECK(!r->key.empty() && r->key.find(',') == std::string_view::npos,
                      "a key is the text between the first two commas");
    SLUICE_FUZZ_CHECK(r->line > last_line, "lines count up");
    last_t = r->t_us;
    last_line = r->line;
    const sluice::core::Nanos now = r->t_us * sluice::core::kNanosPerMicro;
    (void)wait.decide(r->key, now, r->cost);
    (void)windows.decide(r->key, now, r->cost);
  }
  if (!reader.error().empty()) {
    SLUICE_FUZZ_CHECK(reader.error().rfind("line ", 0) == 0, "an error names its line");
  }
  std::fclose(in);
  return 0;
}
