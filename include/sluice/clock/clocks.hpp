// The clocks that read time, for the edges that inject them: the frontends' event loops, the
// CLI, the embedding API, tests and benchmarks. Nothing in core, config or engine includes this.
#pragma once

#include <chrono>
#include <ctime>

#include "sluice/core/clock.hpp"

namespace sluice::clock {

// std::chrono::steady_clock (vDSO clock_gettime(CLOCK_MONOTONIC), about 20-30 ns here).
class SteadyClock final : public core::Clock {
 public:
  core::Nanos now() const override { return read(); }
  static core::Nanos read() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// Wall-clock time in ns since the Unix epoch (std::chrono::system_clock): what an Envoy rate
// limit service counts its windows in, so they start at whole seconds, minutes, hours, days.
class SystemClock final : public core::Clock {
 public:
  core::Nanos now() const override { return read(); }
  static core::Nanos read() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

inline const core::Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

// The process's steady clock, for an edge that has no other to inject.
inline const core::Clock& steady_clock() {
  static const SteadyClock clock;
  return clock;
}

// CLOCK_MONOTONIC_COARSE: the kernel's tick-granular time (1-4 ms steps), a few ns to read.
// Good enough for limits of seconds and minutes; nginx reads time once per event-loop pass.
class CoarseClock final : public core::Clock {
 public:
  core::Nanos now() const override { return read(); }
  static core::Nanos read() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<core::Nanos>(ts.tv_sec) * core::kNanosPerSecond + ts.tv_nsec;
  }
};

}  // namespace sluice::clock
