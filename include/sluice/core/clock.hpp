// The clock as the layers below the frontends see it: an interface they are handed, never
// read on their own (the clocks that read time are in sluice/clock). ManualClock: tests, replays.
#pragma once

#include <atomic>

#include "sluice/core/time.hpp"

namespace sluice::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now() const = 0;
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

// The clocks an edge (`sluice serve`) hands its listeners: steady for decisions, deadlines and
// body pacing; wall for log lines and limits whose windows start at Unix times (Envoy RLS).
struct Clocks {
  const Clock* steady = nullptr;
  const Clock* wall = nullptr;
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
