// A rule's top keys (sluice/engine/top_keys.hpp): space-saving sketches of its keys by requests
// and by denials, one pair per minute in a ring of TopKeys::kMinutes, merged when asked. Fixed
// size, filled in place: noting a decision allocates nothing. Internal to the engine.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "sluice/core/time.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/engine/top_keys.hpp"

namespace sluice::engine::detail {

class TopSketch {
 public:
  // One decision of the rule for the key `tag`: a request, denied or not, at `now`.
  void note(const KeyTag& tag, bool denied, core::Nanos now);

  // The `n` keys ranked highest by `by` over the minutes up to `now` (keys with none of it
  // left out); `hashed`: each key shown as its hash, 16 hex digits (log_key: hash).
  std::vector<TopKey> top(TopBy by, std::size_t n, core::Nanos now, bool hashed) const;

 private:
  static constexpr std::size_t kCapacity = TopKeys::kCapacity;
  // Space-saving over kCapacity keys: a key not held takes the place of the one with the
  // lowest count and starts from that count (its error), so a count never falls short of the
  // key's true one while it is held. The arrays are apart so that a look-up scans 512 bytes.
  struct Ranking {
    std::uint32_t used = 0;
    std::uint64_t hash[kCapacity];
    std::uint32_t count[kCapacity];  // the ranked figure, with the error it started from
    std::uint32_t other[kCapacity];  // the other figure, counted while the key is held
    std::uint8_t size[kCapacity];
    char text[kCapacity][TopKeys::kKeyBytes];

    int find(std::uint64_t h) const;
    // `ranked`/`other_event`: whether this decision adds to each figure. A key comes in only
    // with a ranked event.
    void add(const KeyTag& tag, bool ranked, bool other_event);
  };
  struct Minute {
    std::int64_t index = -1;  // minutes since time 0; -1: never used
    Ranking requests;         // ranked by requests, denials alongside
    Ranking denied;           // ranked by denials, requests alongside
  };

  mutable std::mutex mutex_;  // held for one note (two scans of 64 hashes), never for I/O
  std::array<Minute, TopKeys::kMinutes> ring_;
};

// What one rule's sketch holds in memory (counted in sluice_limit_memory_bytes).
inline constexpr std::size_t kTopSketchBytes = sizeof(TopSketch);

// How many rules of one engine may hold a sketch at once (TopKeys::kMaxRules: 42 MB), so that
// a config of 100,000 rules does not take 4 GB for them.
class TopBudget {
 public:
  explicit TopBudget(std::size_t most) : most_(most) {}
  bool take();
  void give() { used_.fetch_sub(1, std::memory_order_relaxed); }
  bool spent() const { return used_.load(std::memory_order_relaxed) >= most_; }

 private:
  const std::size_t most_;
  std::atomic<std::size_t> used_{0};
};

// A rule's sketch, made at the rule's first decision (a rule never asked costs nothing) within
// its engine's budget; after that, a decision reads one pointer.
class TopSlot {
 public:
  explicit TopSlot(std::shared_ptr<TopBudget> budget) : budget_(std::move(budget)) {}
  ~TopSlot();
  TopSlot(const TopSlot&) = delete;
  TopSlot& operator=(const TopSlot&) = delete;

  // The sketch, made now if need be; nullptr while the budget is spent.
  TopSketch* take();
  // The sketch if made (nullptr: never asked, or refused).
  const TopSketch* get() const { return sketch_.load(std::memory_order_acquire); }
  // Whether the rule was decided while the budget was spent, so that it has no sketch.
  bool refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  std::atomic<TopSketch*> sketch_{nullptr};
  std::atomic<bool> refused_{false};
  std::shared_ptr<TopBudget> budget_;
};

}  // namespace sluice::engine::detail
