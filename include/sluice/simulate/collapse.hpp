// The collapse model of `sluice simulate --scenario collapse*` (docs/simulate.md): an upstream
// of C workers, a service time S with jitter and an unbounded queue, so past C / S its latency
// grows without end, under open-loop load in phases, behind no limit, a static one or an
// adaptive algorithm, each on its own copy of the upstream; in virtual time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/expected.hpp"
#include "sluice/core/time.hpp"

namespace sluice::simulate {

// A stretch of the run: the offered rate (a multiple of the first phase's capacity) and the
// upstream as it is meanwhile (a phase may slow it or take workers away).
struct CollapsePhase {
  core::Nanos length = 0;
  double load = 1;
  int workers = 16;
  core::Nanos service = 10 * core::kNanosPerMilli;
};

struct CollapseModel {
  std::string_view name;
  std::string_view description;
  std::vector<CollapsePhase> phases;
  core::Nanos jitter = 2 * core::kNanosPerMilli;  // service times uniform in S +/- jitter
  // A client gives up after this long: the gateway releases its permit at once, a dropped
  // sample with the time waited as its RTT (as the gateway counts a client that left while
  // its request was at the upstream), while the upstream, unaware, still serves it.
  core::Nanos deadline = 200 * core::kNanosPerMilli;

  double capacity(std::size_t phase = 0) const;  // requests a second: workers / service
  core::Nanos duration() const;
};

// collapse (load steps 0.5x .. 3x and back), collapse-slows, collapse-shrinks.
std::span<const CollapseModel> collapse_models();
const CollapseModel* find_collapse_model(std::string_view name);

// What stands before the upstream: `none`, `static:N` (a concurrency limit of N), or an
// adaptive algorithm by its config name with its reference's defaults (`aimd`, `vegas`,
// `gradient2`, `envoy-gradient`), envoy-gradient optionally `:min_rtt_interval=DURATION`.
struct Guard {
  enum class Kind { kNone, kStatic, kAdaptive };
  std::string label;  // as written
  Kind kind = Kind::kNone;
  std::int64_t limit = 0;            // kStatic
  std::string algorithm;             // kAdaptive
  core::Nanos min_rtt_interval = 0;  // envoy-gradient; 0: its default
};
core::Expected<Guard> parse_guard(std::string_view text);
// None, static at the first phase's workers, and each algorithm.
std::vector<std::string> default_guards(const CollapseModel& model);

// Per bucket of time, by when requests arrived.
struct CollapseBucket {
  double offered = 0;   // per second
  double goodput = 0;   // answered within the deadline, per second
  double refused = 0;   // by the guard, per second
  double timeouts = 0;  // given up by their clients, per second
  double limit = 0;     // the guard's limit at the bucket's end (0: none)
  double p99_ms = 0;    // of the answers within the deadline; 0: none
  double capacity = 0;  // the upstream's, per second
};

struct CollapseSeries {
  std::string label;
  std::vector<CollapseBucket> buckets;
};

struct CollapseResult {
  const CollapseModel* model = nullptr;
  core::Nanos bucket = 0;
  std::vector<CollapseSeries> series;
};

// At most this many guards side by side.
inline constexpr std::size_t kMaxGuards = 8;

core::Expected<CollapseResult> run_collapse(const CollapseModel& model,
                                            std::span<const Guard> guards, core::Nanos bucket,
                                            std::uint64_t seed);

// A phase's share of the run: the buckets that lie wholly inside it, and its mean goodput
// there as a share of its capacity (for the summary and tests).
double phase_goodput_share(const CollapseResult& r, std::size_t series, std::size_t phase,
                           core::Nanos skip = core::kNanosPerSecond);

}  // namespace sluice::simulate
