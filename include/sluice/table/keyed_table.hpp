// KeyedTable: key -> limiter state for one limit, shared by all threads, in a fixed memory
// budget. The gateway's per-client state lives here; a key flood evicts, it never allocates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>

#include "sluice/core/algorithm.hpp"
#include "sluice/core/int128.hpp"
#include "sluice/core/peek.hpp"
#include "sluice/core/rescale.hpp"
#include "sluice/table/key_hash.hpp"
#include "sluice/table/slot_arena.hpp"

namespace sluice::table {

struct TableStats {
  std::size_t keys = 0;          // slots holding a key now
  std::size_t capacity = 0;      // slots in all
  std::uint64_t evictions = 0;   // live keys pushed out by new ones (CLOCK victims)
  std::uint64_t idle_drops = 0;  // keys dropped because their state was back to initial
  std::size_t memory_bytes = 0;  // the budget actually mapped (touched lazily)
};

// Design (docs/architecture.md has the long form):
// - A set-associative cache: the budget is cut into buckets of 8 slots, aligned to cache lines;
//   a key lives only in the bucket its hash picks (multiply-shift), so a lookup reads one
//   bucket (2-4 adjacent lines) and needs no chains or tombstones.
// - A slot is one 64-bit word (fingerprint + lock, reference and parity bits) and the
//   algorithm's state: 16 bytes for one-word states, 24 for two-word ones. No key bytes are
//   stored: the key is the bucket choice plus a 61-bit fingerprint from XXH3-128.
// - Concurrency: the word doubles as a per-slot spin lock (one CAS to take, one store to
//   release). There is no shard or global lock; threads meet only on the same slot.
// - Eviction: CLOCK (second chance) within the bucket, starting at a hash-chosen slot; a
//   victim whose state is back to initial (A::idle) counts as an idle drop, not an eviction.
// - Live parameter change: parameters are double-buffered; each slot records which buffer its
//   state was last written under and is carried over (A::retune) by a sweep or on first touch.
template <core::Algorithm A>
requires std::is_trivially_copyable_v<typename A::State>
class KeyedTable {
 public:
  using Algorithm = A;
  using Params = typename A::Params;
  using State = typename A::State;
  static constexpr int kWays = 8;

  struct Slot {
    std::atomic<std::uint64_t> word{0};  // 0: empty
    State state;
  };
  struct alignas(64) Bucket {
    Slot slots[kWays];
  };

  // Throws std::invalid_argument when the budget cannot hold one bucket.
  KeyedTable(Params params, std::size_t budget_bytes)
      : arena_(checked_budget(budget_bytes)),
        buckets_(static_cast<Bucket*>(arena_.data())),
        bucket_count_(budget_bytes / sizeof(Bucket)) {
    params_[0] = params;
    params_[1] = params;
  }

  // A slot locked for one key; unlocks when destroyed. Not copyable; movable.
  class Locked {
   public:
    Locked(Locked&& o) noexcept
        : table_(o.table_), slot_(o.slot_), held_(o.held_), params_(o.params_), now_(o.now_) {
      o.slot_ = nullptr;
    }
    Locked& operator=(Locked&&) = delete;
    Locked(const Locked&) = delete;
    ~Locked() {
      if (slot_ != nullptr) table_->unlock(*slot_, held_);
    }
    State& state() { return slot_->state; }
    // The parameters this state is under; stable while the slot is locked (a retune's sweep
    // waits for the lock before it can finish, and only then may the next retune start).
    const Params& params() const { return *params_; }
    // The time to decide this key at: the caller's `now`, or the latest time another thread
    // has already decided this table at when that is later (see monotonic()).
    core::Nanos now() const { return now_; }

   private:
    friend class KeyedTable;
    Locked(KeyedTable* t, Slot* s, std::uint64_t held, core::Nanos now)
        : table_(t), slot_(s), held_(held), params_(&t->params_[parity_of(held)]), now_(now) {}
    KeyedTable* table_;
    Slot* slot_;
    std::uint64_t held_;
    const Params* params_;
    core::Nanos now_;
  };

  // Finds the key's slot, or claims one (evicting if the bucket is full), and locks it.
  // Blocking: waits while other threads hold the slot, or every slot of a full bucket (they
  // pass quickly: a holder never waits on this table). nullopt only when the key is new and
  // every slot of its bucket holds leases (pinned): the table is full of work.
  std::optional<Locked> lock(const KeyHash& h, core::Nanos now) { return acquire(h, now, true); }

  // As lock(), but gives up (nullopt) instead of waiting for a slot another thread holds.
  // Policies that lock several tables use it to back off instead of deadlocking.
  std::optional<Locked> try_lock(const KeyHash& h, core::Nanos now) {
    return acquire(h, now, false);
  }

  // Decides and commits one request against one limit. Thread-safe.
  core::Decision decide(const KeyHash& h, core::Nanos now, std::int64_t cost,
                        core::Nanos max_wait) {
    std::optional<Locked> l = lock(h, now);
    if (!l) return core::denied(0, 0, 0, -1);  // no room for another key with leases out
    const Params& p = l->params();
    const auto step = A::decide(p, l->state(), l->now(), cost, max_wait);
    if (step.decision.allowed || step.commit_on_denial) core::commit<A>(p, l->state(), step);
    return step.decision;
  }
  core::Decision decide(std::string_view key, core::Nanos now, std::int64_t cost,
                        core::Nanos max_wait) {
    return decide(hash_key(key), now, cost, max_wait);
  }

  // A key's state without charging it (core::peek): `seen` false when the table holds no
  // state for it (never seen, evicted or dropped idle), which is then a new key's. Neither
  // inserts the key nor marks it recently used. Thread-safe.
  struct Peeked {
    bool seen = false;
    core::Decision decision;
  };
  Peeked peek(const KeyHash& h, core::Nanos now) {
    Peeked out;
    Slot* s = find_locked(h);
    out.seen = s != nullptr;
    if (s == nullptr) {
      const Params p = params();
      const core::Nanos at = monotonic(now);
      out.decision = core::peek<A>(p, A::start(p, at), at);
      return out;
    }
    const std::uint64_t word = s->word.load(std::memory_order_relaxed);
    std::uint64_t held = word;
    const core::Nanos at = monotonic(now);
    migrate(*s, held, at);
    out.decision = core::peek<A>(params_[parity_of(held)], s->state, at);
    s->word.store(held & ~kLock, std::memory_order_release);  // reference bit as it was
    return out;
  }

  // Forgets the key: its next request finds a new key's state (a full quota). False when the
  // table held nothing for it. Thread-safe.
  bool reset(const KeyHash& h) {
    Slot* s = find_locked(h);
    if (s == nullptr) return false;
    // Counted out before the slot is free: a key claiming it at once is never counted twice.
    stripe(bucket_index(h)).keys.fetch_sub(1, std::memory_order_relaxed);
    s->word.store(0, std::memory_order_release);
    return true;
  }

  // Decides a batch of requests (one per key, in order), overlapping their memory accesses:
  // each key's bucket is prefetched a few requests ahead, before the locked instructions of
  // the decisions in between would stall the loads. An event loop that has read several
  // requests decides them this way. out.size() must be >= keys.size().
  void decide_many(std::span<const std::string_view> keys, core::Nanos now, std::int64_t cost,
                   core::Nanos max_wait, std::span<core::Decision> out) {
    constexpr std::size_t kAhead = 8;
    KeyHash ring[kAhead];
    const std::size_t n = keys.size();
    for (std::size_t i = 0; i < n + kAhead; ++i) {
      if (i >= kAhead) out[i - kAhead] = decide(ring[i % kAhead], now, cost, max_wait);
      if (i < n) {
        ring[i % kAhead] = hash_key(keys[i]);
        prefetch(ring[i % kAhead]);
      }
    }
  }

  // Starts loading the key's bucket into cache (for callers that pipeline their own work).
  void prefetch(const KeyHash& h) const {
    const char* p = reinterpret_cast<const char*>(&buckets_[bucket_index(h)]);
    for (std::size_t off = 0; off < sizeof(Bucket); off += 64) __builtin_prefetch(p + off, 1, 3);
  }

  // New parameters for every key from the next decision on; each key's state is carried over
  // as its algorithm's reference does (A::retune), then with `proportional` rescaled to keep
  // its share of the capacity (core::rescale, where A has one). Thread-safe; concurrent
  // decisions go on.
  void retune(const Params& params, core::Nanos now, bool proportional = false) {
    std::lock_guard<std::mutex> guard(retune_mutex_);
    const int old = parity_.load(std::memory_order_relaxed);
    params_[1 - old] = params;
    proportional_[1 - old] = proportional;
    parity_.store(1 - old, std::memory_order_release);
    for (std::size_t b = 0; b < bucket_count_; ++b) {
      for (Slot& s : buckets_[b].slots) {
        if (s.word.load(std::memory_order_relaxed) == 0) continue;
        std::uint64_t held = 0;
        if (!lock_any(s, held)) continue;
        migrate(s, held, monotonic(now));
        s.word.store(held & ~kLock, std::memory_order_release);  // reference bit as it was
      }
    }
  }

  const Params& params() const { return params_[parity_.load(std::memory_order_acquire)]; }

  TableStats stats() const {
    TableStats st;
    for (const auto& c : counters_) {
      st.keys += static_cast<std::size_t>(c.keys.load(std::memory_order_relaxed));
      st.evictions += static_cast<std::uint64_t>(c.evictions.load(std::memory_order_relaxed));
      st.idle_drops += static_cast<std::uint64_t>(c.idle_drops.load(std::memory_order_relaxed));
    }
    st.capacity = bucket_count_ * kWays;
    st.memory_bytes = bucket_count_ * sizeof(Bucket);
    return st;
  }

  static constexpr std::size_t slot_bytes() { return sizeof(Slot); }

 private:
  static constexpr std::uint64_t kLock = 1ull << 63;
  static constexpr std::uint64_t kRef = 1ull << 62;
  static constexpr std::uint64_t kParity = 1ull << 61;
  static constexpr std::uint64_t kFingerprint = kParity - 1;
  static constexpr int kStripes = 16;

  struct alignas(64) Counters {
    std::atomic<std::int64_t> keys{0};
    std::atomic<std::int64_t> evictions{0};
    std::atomic<std::int64_t> idle_drops{0};
  };

  static std::size_t checked_budget(std::size_t bytes) {
    if (bytes < sizeof(Bucket)) {
      throw std::invalid_argument("table budget below one bucket (" +
                                  std::to_string(sizeof(Bucket)) + " bytes)");
    }
    return bytes / sizeof(Bucket) * sizeof(Bucket);
  }

  // The table's time never runs back. Each event loop decides with the time it read at the
  // start of its pass, so a request can carry a time earlier than one another loop has just
  // decided the same key at; every algorithm would then misjudge it (GCRA refuses when its TAT
  // is further ahead than the tolerance, a token bucket rewinds `last` and refills twice, a
  // window resets). nginx's rule (limit_req: a time before `last` is no time elapsed) for all
  // of them: the decision takes the latest time this table has been decided at. Called with
  // the slot locked: the previous holder raised `latest_` before it unlocked, so this sees it.
  core::Nanos monotonic(core::Nanos now) {
    core::Nanos seen = latest_.load(std::memory_order_relaxed);
    while (now > seen) {
      if (latest_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) return now;
    }
    return seen;
  }

  static std::uint64_t fingerprint(const KeyHash& h) {
    const std::uint64_t fp = h.fingerprint & kFingerprint;
    return fp == 0 ? 1 : fp;
  }
  static int parity_of(std::uint64_t w) { return (w & kParity) != 0 ? 1 : 0; }

  std::size_t bucket_index(const KeyHash& h) const {
    return static_cast<std::size_t>((static_cast<core::UInt128>(h.bucket) * bucket_count_) >> 64);
  }
  Counters& stripe(std::size_t bucket) { return counters_[bucket % kStripes]; }

  enum class Grab { kLocked, kChanged, kBusy };

  // Locks `s` if it still holds `fp`; kChanged when it no longer does.
  Grab lock_if(Slot& s, std::uint64_t fp, bool wait, std::uint64_t& held) {
    for (;;) {
      std::uint64_t w = s.word.load(std::memory_order_acquire);
      if ((w & kFingerprint) != fp) return Grab::kChanged;
      if ((w & kLock) != 0) {
        if (!wait) return Grab::kBusy;
        pause();
        continue;
      }
      if (s.word.compare_exchange_weak(w, w | kLock, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        held = (w | kLock) & ~kRef;  // a found key: unlock marks it referenced
        return Grab::kLocked;
      }
    }
  }

  enum class Own { kLocked, kNone, kBusy };

  // Locks the key's own slot in `b` (waiting for another holder when `wait`): kNone when no
  // slot holds the key, kBusy when one does and is held (only without `wait`).
  Own lock_own(Bucket& b, std::uint64_t fp, bool wait, Slot*& slot, std::uint64_t& held) {
    for (int attempt = 0;; ++attempt) {
      if (attempt > 0) pause();
      bool changed = false;
      for (Slot& s : b.slots) {
        if ((s.word.load(std::memory_order_acquire) & kFingerprint) != fp) continue;
        const Grab g = lock_if(s, fp, wait, held);
        if (g == Grab::kBusy) return Own::kBusy;
        if (g == Grab::kChanged) {
          changed = true;
          break;
        }
        slot = &s;
        return Own::kLocked;
      }
      if (!changed) return Own::kNone;
    }
  }

  // The key's own slot, locked, or nullptr when none holds it.
  Slot* find_locked(const KeyHash& h) {
    Slot* slot = nullptr;
    std::uint64_t held = 0;
    const Own o = lock_own(buckets_[bucket_index(h)], fingerprint(h), true, slot, held);
    return o == Own::kLocked ? slot : nullptr;
  }

  // Locks a non-empty slot whatever key it holds (the retune sweep).
  bool lock_any(Slot& s, std::uint64_t& held) {
    for (;;) {
      std::uint64_t w = s.word.load(std::memory_order_acquire);
      if (w == 0) return false;
      if ((w & kLock) != 0) {
        pause();
        continue;
      }
      if (s.word.compare_exchange_weak(w, w | kLock, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        held = w | kLock;
        return true;
      }
    }
  }

  // Found keys are marked referenced; a new key's word carries kNew until its first unlock,
  // which leaves it unreferenced.
  void unlock(Slot& s, std::uint64_t held) {
    const std::uint64_t ref = (held & kRef) != 0 ? 0 : kRef;  // kRef in `held` means "new"
    s.word.store((held & ~kLock & ~kRef) | ref, std::memory_order_release);
  }

  // Brings a locked slot's state under the current parameters.
  void migrate(Slot& s, std::uint64_t& held, core::Nanos now) {
    const int cur = parity_.load(std::memory_order_acquire);
    const int was = parity_of(held);
    if (was == cur) return;
    s.state = A::retune(params_[was], params_[cur], s.state, now);
    if constexpr (core::Rescalable<A>) {
      if (proportional_[cur]) s.state = core::rescale(params_[was], params_[cur], s.state, now);
    }
    held = cur == 1 ? (held | kParity) : (held & ~kParity);
  }

  std::optional<Locked> acquire(const KeyHash& h, core::Nanos now, bool wait) {
    const std::size_t bi = bucket_index(h);
    Bucket& b = buckets_[bi];
    const std::uint64_t fp = fingerprint(h);
    for (int attempt = 0;; ++attempt) {
      if (attempt > 0) pause();
      // 1. The key's own slot.
      Slot* own = nullptr;
      std::uint64_t held = 0;
      const Own found = lock_own(b, fp, wait, own, held);
      if (found == Own::kBusy) return std::nullopt;
      if (found == Own::kLocked) {
        const core::Nanos at = monotonic(now);
        migrate(*own, held, at);
        return Locked(this, own, held, at);
      }
      // 2. A new slot: empty, idle or a CLOCK victim.
      bool busy = false;
      Slot* claimed = claim(b, bi, fp, now, held, busy);
      if (claimed == nullptr) {
        // Every slot is locked by another thread or pinned by leases. Locks pass; pins may
        // not, so only a bucket of pins (nothing locked) is a refusal.
        if (!wait || !busy) return std::nullopt;
        std::this_thread::yield();
        continue;
      }
      // 3. Another thread may have inserted the same key meanwhile; the lowest slot wins.
      if (duplicate_below(b, claimed, fp)) {
        claimed->word.store(0, std::memory_order_release);
        stripe(bi).keys.fetch_sub(1, std::memory_order_relaxed);
        continue;
      }
      const core::Nanos at = monotonic(now);
      claimed->state = A::start(params_[parity_of(held)], at);
      return Locked(this, claimed, held, at);
    }
  }

  bool duplicate_below(Bucket& b, Slot* mine, std::uint64_t fp) {
    for (Slot* s = b.slots; s != mine; ++s) {
      if ((s->word.load(std::memory_order_acquire) & kFingerprint) == fp) return true;
    }
    return false;
  }

  // Claims a slot for a new key and locks it (the caller sets its state). nullptr if all are held;
  // `busy` then says whether any was locked by another thread (rather than pinned).
  Slot* claim(Bucket& b, std::size_t bi, std::uint64_t fp, core::Nanos now, std::uint64_t& held,
              bool& busy) {
    const int cur = parity_.load(std::memory_order_acquire);
    // kRef set while locked marks the key as new (unlock leaves it unreferenced).
    const std::uint64_t fresh = fp | kLock | kRef | (cur == 1 ? kParity : 0);
    for (Slot& s : b.slots) {
      std::uint64_t expected = 0;
      if (s.word.load(std::memory_order_relaxed) == 0 &&
          s.word.compare_exchange_strong(expected, fresh, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
        stripe(bi).keys.fetch_add(1, std::memory_order_relaxed);
        held = fresh;
        return &s;
      }
    }
    // Full: not-recently-used within the bucket. Prefer an idle slot (state back to initial),
    // else the first unreferenced one from a hash-chosen start; new keys start unreferenced,
    // so a flood of one-shot keys replaces itself and spares keys that come back.
    const int start = static_cast<int>(fp % kWays);
    for (int round = 0; round < 2; ++round) {
      Slot* candidate = nullptr;
      std::uint64_t candidate_word = 0;
      for (int i = 0; i < kWays; ++i) {
        Slot& s = b.slots[(start + i) % kWays];
        std::uint64_t w = s.word.load(std::memory_order_acquire);
        if (w == 0 || (w & kLock) != 0) {
          busy = true;  // emptied or locked since the first pass: worth another try
          continue;
        }
        if (candidate != nullptr && (w & kRef) != 0) continue;  // only idle could beat it
        if (!s.word.compare_exchange_strong(w, w | kLock, std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
          busy = true;
          continue;
        }
        if (pinned(s.state)) {
          s.word.store(w, std::memory_order_release);  // holds leases: never evicted
          continue;
        }
        if (A::idle(params_[parity_of(w)], s.state, now)) {
          if (candidate != nullptr)
            candidate->word.store(candidate_word, std::memory_order_release);
          stripe(bi).idle_drops.fetch_add(1, std::memory_order_relaxed);
          return reuse(s, fresh, held);
        }
        if (candidate == nullptr && (w & kRef) == 0) {
          candidate = &s;
          candidate_word = w;
          continue;
        }
        s.word.store(w, std::memory_order_release);
      }
      if (candidate != nullptr) {
        stripe(bi).evictions.fetch_add(1, std::memory_order_relaxed);
        return reuse(*candidate, fresh, held);
      }
      // Every slot was referenced: clear the bits (a new NRU epoch for this bucket), retry.
      for (Slot& s : b.slots) s.word.fetch_and(~kRef, std::memory_order_acq_rel);
    }
    return nullptr;
  }

  // A state that must not be dropped (a concurrency count with leases out): evicting it would
  // forget the leases and admit past the limit.
  static bool pinned(const State& st) {
    if constexpr (requires { A::pinned(st); }) {
      return A::pinned(st);
    } else {
      (void)st;
      return false;
    }
  }

  static Slot* reuse(Slot& s, std::uint64_t fresh, std::uint64_t& held) {
    s.word.store(fresh, std::memory_order_release);
    held = fresh;
    return &s;
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  SlotArena arena_;
  Bucket* buckets_;
  std::size_t bucket_count_;
  Params params_[2];
  bool proportional_[2] = {false, false};  // under each buffer: on_change: proportional
  std::atomic<int> parity_{0};
  alignas(64) std::atomic<core::Nanos> latest_{std::numeric_limits<core::Nanos>::min()};
  std::mutex retune_mutex_;
  Counters counters_[kStripes];
};

}  // namespace sluice::table
