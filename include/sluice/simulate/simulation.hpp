// A scenario's traffic through several limits side by side: each limit decides the same
// requests on its own (a local::LimitSet of one limit, in virtual time, as `sluice replay`
// decides them), and the run keeps, per limit, source and bucket of time, what was offered,
// admitted, denied and delayed, and when admitted requests proceed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/expected.hpp"
#include "sluice/core/time.hpp"
#include "sluice/simulate/delay_histogram.hpp"
#include "sluice/simulate/scenario.hpp"
#include "sluice/simulate/traffic.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::simulate {

struct LimitUnderTest {
  std::string label;  // as the user wrote it
  spec::LimitSpec spec;
};

struct RunOptions {
  core::Nanos duration = 0;
  core::Nanos bucket = 0;
  core::Nanos max_wait = 0;  // 0: reject mode; core::kForever: wait as long as it takes
  std::uint64_t seed = 1;
};

// One limit's counts for one source in one bucket of time. Counts are of requests, whatever
// their cost.
struct Cell {
  std::int64_t admitted = 0;  // requests arriving in the bucket that were allowed
  std::int64_t denied = 0;
  std::int64_t passed = 0;        // allowed requests that proceed (arrival + delay) in the bucket
  std::int64_t delayed = 0;       // allowed with a delay
  std::int64_t delay_sum_us = 0;  // of the requests admitted in the bucket
  std::int64_t delay_max_us = 0;
};

struct LimitSeries {
  std::string label;
  std::vector<std::vector<Cell>> cells;  // [source][bucket]
  DelayHistogram delays;                 // every admitted request's delay, in µs
  std::int64_t admitted = 0;
  std::int64_t denied = 0;
  std::int64_t delayed = 0;
  std::int64_t passed_late = 0;  // admitted requests that proceed after the series ends
  std::vector<std::int64_t> admitted_by_source;
};

struct Result {
  core::Nanos duration = 0;
  core::Nanos bucket = 0;
  // The series' length in buckets: the run's, and more if a delayed request proceeds after the
  // run, up to twice the run's (later ones count in LimitSeries::passed_late).
  std::size_t buckets = 0;
  std::vector<std::string> sources;
  std::vector<std::vector<std::int64_t>> offered;  // [source][bucket]
  std::vector<std::int64_t> offered_by_source;
  std::int64_t requests = 0;
  std::vector<LimitSeries> limits;
};

struct Hooks {
  std::function<void(const Arrival&, std::string_view key)> request;  // each request, in order
  std::function<void(double done)> progress;  // the fraction of the run done, now and then
};

// Bounds on a run: limits side by side, counters kept (limits × sources × buckets, the tail
// of twice the run included: 2,000,000 are 96 MB), and requests sent (a billion take about
// 10 minutes through 4 limits: more is a typo in a rate or a duration).
inline constexpr std::size_t kMaxLimits = 16;
inline constexpr std::int64_t kMaxCells = 2'000'000;
inline constexpr double kMaxRequests = 1e9;

// The bucket for a run given none: the smallest of 1, 2, 5 × 10^k µs with at most 200 buckets.
core::Nanos default_bucket(core::Nanos duration);

// Refuses a run whose counters would pass kMaxCells (naming --bucket) or whose scenario would
// send more than kMaxRequests (naming --duration), saying by how much.
core::Expected<bool> check_bounds(const Scenario& scenario, std::size_t limits,
                                  const RunOptions& o);

// Errors: the size check, or a request whose arithmetic overflows 64-bit time (naming it).
core::Expected<Result> run(const Scenario& scenario, const std::vector<LimitUnderTest>& limits,
                           const RunOptions& options, const Hooks& hooks = {});

}  // namespace sluice::simulate
