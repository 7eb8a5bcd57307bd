// Events of a rule counted for the server log's once-a-second line (a dry-run rule's would-be
// refusals): a count and the latest key, bumped by every event loop without waiting on a lock,
// taken by the one timer that writes the line (Engine::take_dry_run_denials).
#pragma once

#include <atomic>
#include <cstdint>

#include "sluice/engine/outcome.hpp"

namespace sluice::engine::detail {

class EventTally {
 public:
  // One event of `key`. The key is kept unless another loop is keeping its own at this instant
  // (then that one is the latest).
  void add(const KeyTag& key) {
    count_.fetch_add(1, std::memory_order_relaxed);
    if (busy_.test_and_set(std::memory_order_acquire)) return;
    latest_ = key;
    busy_.clear(std::memory_order_release);
  }

  // The events since the previous take (0: none), and the latest key into `latest`.
  std::uint64_t take(KeyTag& latest) {
    const std::uint64_t n = count_.exchange(0, std::memory_order_relaxed);
    if (n == 0) return 0;
    while (busy_.test_and_set(std::memory_order_acquire)) {
    }
    latest = latest_;
    busy_.clear(std::memory_order_release);
    return n;
  }

 private:
  std::atomic<std::uint64_t> count_{0};
  std::atomic_flag busy_;  // held while latest_ is written or read: one copy of 64 bytes
  KeyTag latest_;
};

}  // namespace sluice::engine::detail
