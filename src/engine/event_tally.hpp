// Events of a rule counted for the server log's once-a-second line (a dry-run rule's would-be
// refusals): a count and the latest key and route, bumped by every event loop without waiting
// on a lock, taken by the one timer that writes the line (Engine::take_dry_run_denials).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/engine/outcome.hpp"

namespace sluice::engine::detail {

class EventTally {
 public:
  // The route's name as kept: cut to this many bytes (the line is for a person to read).
  static constexpr std::size_t kRouteBytes = 48;

  // One event of `key` on `route` ("" for an ask that has none: the check API's). Kept unless
  // another loop is keeping its own at this instant (then that one is the latest). The route's
  // name is copied: the snapshot that holds it may be gone by the time the line is written.
  void add(const KeyTag& key, std::string_view route) {
    count_.fetch_add(1, std::memory_order_relaxed);
    if (busy_.test_and_set(std::memory_order_acquire)) return;
    latest_ = key;
    route_size_ = static_cast<std::uint8_t>(std::min(route.size(), kRouteBytes));
    std::copy_n(route.data(), route_size_, route_);
    busy_.clear(std::memory_order_release);
  }

  // The events since the previous take (0: none), the latest key into `latest` and its route
  // into `route`.
  std::uint64_t take(KeyTag& latest, std::string& route) {
    const std::uint64_t n = count_.exchange(0, std::memory_order_relaxed);
    if (n == 0) return 0;
    while (busy_.test_and_set(std::memory_order_acquire)) {
    }
    latest = latest_;
    route.assign(route_, route_size_);
    busy_.clear(std::memory_order_release);
    return n;
  }

 private:
  std::atomic<std::uint64_t> count_{0};
  std::atomic_flag busy_;  // held while latest_ and route_ are written or read
  KeyTag latest_;
  std::uint8_t route_size_ = 0;
  char route_[kRouteBytes];
};

}  // namespace sluice::engine::detail
