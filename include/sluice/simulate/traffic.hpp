// The requests a scenario makes, generated in time order as a stream: memory is one small state
// per source, whatever the length of the run. The same seed gives the same requests (its own
// generator and distributions, not the standard library's implementation-defined ones).
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/time.hpp"
#include "sluice/simulate/scenario.hpp"

namespace sluice::simulate {

// One request: when (whole microseconds, as a replay trace has them), which source, which of
// the source's keys, and its cost.
struct Arrival {
  core::Nanos t = 0;
  std::uint32_t source = 0;
  std::int64_t key = 0;  // 0 .. keys-1
  std::int64_t cost = 1;
};

// splitmix64 (Steele, Lea and Flood): one word of state, and a full-period, well-mixed stream;
// each source seeds its own from (seed, its index), so adding a source changes no other's.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in (0, 1]: 53 random bits, never 0, so -log(u) is finite.
  double unit();
  // Uniform in [0, n) by the multiply-shift map (bias below n / 2^64).
  std::int64_t below(std::int64_t n);

 private:
  std::uint64_t state_;
};

// About how many requests the scenario sends in [0, duration): the expected count of its
// random sources, the exact count of the others.
double expected_requests(const Scenario& scenario, core::Nanos duration);

class Traffic {
 public:
  // Requests in [0, duration); a source's `end` past it is cut there.
  Traffic(const Scenario& scenario, core::Nanos duration, std::uint64_t seed);

  // The next request in time order (ties in source order), or nullopt at the end.
  std::optional<Arrival> next();

  // The key's text: the source's key, or KEY-INDEX when the source has several.
  std::string_view key(const Arrival& a);

 private:
  struct Stream {
    const Source* source = nullptr;
    Random random{0};
    core::Nanos end = 0;
    double clock_s = 0;        // poisson, flood, diurnal: the exact time in s, before rounding
    double period_s = 0;       // diurnal: one cycle
    std::int64_t index = 0;    // steady: requests so far; burst, boundary: the round
    std::int64_t left = 0;     // burst, boundary: requests left at the current instant
    bool second_half = false;  // boundary: the round's second instant
    core::Nanos next = 0;      // the time of the stream's next request
    bool done = false;
  };
  struct Later {
    bool operator()(const std::pair<core::Nanos, std::uint32_t>& a,
                    const std::pair<core::Nanos, std::uint32_t>& b) const {
      return a > b;
    }
  };

  void advance(Stream& s);
  void advance_random(Stream& s);
  void advance_burst(Stream& s);

  std::vector<Stream> streams_;
  std::priority_queue<std::pair<core::Nanos, std::uint32_t>,
                      std::vector<std::pair<core::Nanos, std::uint32_t>>, Later>
      order_;
  std::string key_;
};

}  // namespace sluice::simulate
