// A scenario for `sluice simulate`: named sources of synthetic traffic over a run, as read from a
// small YAML file or taken from the built-in set (docs/simulate.md describes the format).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/expected.hpp"
#include "sluice/core/rate.hpp"
#include "sluice/core/time.hpp"

namespace sluice::simulate {

enum class Shape : std::uint8_t { kSteady, kPoisson, kBurst, kBoundary, kDiurnal, kFlood };

// The shape's name as a scenario writes it ("steady", ..., "flood").
std::string_view shape_name(Shape shape);

// `end` of a source that runs until the run ends (whatever --duration makes it).
inline constexpr core::Nanos kUntilTheEnd = core::kForever;

// One stream of requests. Which fields apply depends on the shape (docs/simulate.md's table);
// the reader refuses a field its shape does not use, so none is silently ignored.
struct Source {
  std::string name;
  Shape shape = Shape::kSteady;
  std::string key;        // the one key, or the stem of `keys` keys: KEY-0 ... KEY-(N-1)
  std::int64_t keys = 1;  // more than one: each request picks one uniformly at random
  std::int64_t cost = 1;
  core::Nanos start = 0;  // requests in [start, end)
  core::Nanos end = kUntilTheEnd;
  core::Rate rate{};                       // steady, poisson, flood; diurnal: the peak
  core::Rate low{};                        // diurnal: the trough
  std::int64_t count = 0;                  // burst; boundary: requests on each side of the boundary
  core::Nanos at = 0;                      // burst: when; boundary: the boundary
  core::Nanos every = 0;                   // burst, boundary: repeated this often (0: once)
  core::Nanos gap = core::kNanosPerMilli;  // boundary: the first half comes at `at - gap`
  core::Nanos period = 0;  // diurnal: one cycle, trough to trough (0: the run's duration)
  int line = 0;            // where the source is written (1-based)
};

// A limit the scenario suggests, used when the command line gives no --limit.
struct SuggestedLimit {
  std::string spec;
  int line = 0;
};

struct Scenario {
  std::string name;   // the built-in's name, or the file's path
  std::string where;  // what errors are prefixed with: the file's path, or "scenario NAME"
  std::string description;
  core::Nanos duration = 10 * core::kNanosPerSecond;
  core::Nanos bucket = 0;  // the series' resolution; 0: chosen from the duration
  std::vector<SuggestedLimit> limits;
  std::vector<Source> sources;
};

// Bounds that keep a scenario's memory and run time sane; errors name the bound.
inline constexpr std::size_t kMaxScenarioBytes = 1 << 20;
inline constexpr std::size_t kMaxSources = 32;
inline constexpr std::int64_t kMaxKeysPerSource = 1'000'000;
inline constexpr std::int64_t kMaxBurstCount = 10'000'000;

// Reads a scenario from YAML text. Errors read "WHERE:LINE: problem" (a YAML syntax error, an
// unknown or misplaced field, a bad value), LINE counting from 1.
core::Expected<Scenario> parse_scenario(std::string_view yaml, const std::string& where);

// A short account of a source for reports: "steady 20/s", "burst 50 at 2s", ...
std::string describe(const Source& source);

}  // namespace sluice::simulate
