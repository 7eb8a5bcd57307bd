// Clocks injected at the edge: the one place that reads time. Algorithms and tables take `now`.
// ManualClock serves tests and replays; SteadyClock and CoarseClock serve the daemon.
#pragma once

#include <atomic>
#include <chrono>
#include <ctime>

#include "sluice/core/time.hpp"

namespace sluice::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now() const = 0;
};

// std::chrono::steady_clock (vDSO clock_gettime(CLOCK_MONOTONIC), about 20-30 ns here).
class SteadyClock final : public Clock {
 public:
  Nanos now() const override { return read(); }
  static Nanos read() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// Wall-clock time in ns since the Unix epoch (std::chrono::system_clock): what an Envoy rate
// limit service counts its windows in, so they start at whole seconds, minutes, hours, days.
class SystemClock final : public Clock {
 public:
  Nanos now() const override { return read(); }
  static Nanos read() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

inline const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

// The process's steady clock, for an edge that has no other to inject.
inline const Clock& steady_clock() {
  static const SteadyClock clock;
  return clock;
}

// CLOCK_MONOTONIC_COARSE: the kernel's tick-granular time (1-4 ms steps), a few ns to read.
// Good enough for limits of seconds and minutes; nginx reads time once per event-loop pass.
class CoarseClock final : public Clock {
 public:
  Nanos now() const override { return read(); }
  static Nanos read() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
  }
};

// Time as an event loop caches it: refreshed once per loop pass by its owner, read for free
// by every request handled in that pass (nginx's ngx_current_msec).
class CachedClock final : public Clock {
 public:
  explicit CachedClock(const Clock& source) : source_(source), now_(source.now()) {}
  Nanos now() const override { return now_.load(std::memory_order_relaxed); }
  void refresh() { now_.store(source_.now(), std::memory_order_relaxed); }

 private:
  const Clock& source_;
  std::atomic<Nanos> now_;
};

// A clock that moves only when told to: tests and trace replays.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Nanos start = 0) : now_(start) {}
  Nanos now() const override { return now_.load(std::memory_order_relaxed); }
  void set(Nanos t) { now_.store(t, std::memory_order_relaxed); }
  void advance(Nanos d) { now_.fetch_add(d, std::memory_order_relaxed); }

 private:
  std::atomic<Nanos> now_;
};

}  // namespace sluice::core
