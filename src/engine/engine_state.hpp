// The engine's own state behind Engine (engine.hpp): the snapshot in force, the limits made at
// first use, CL.THROTTLE's table and the decision service's permits, and the two halves of a
// decision (start, finish) that Loop calls. Internal to the engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "lease_book.hpp"
#include "limit_factory.hpp"
#include "sluice/backend/redis/query.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/local/dynamic_limit.hpp"
#include "sluice/support/shared_slot.hpp"
#include "snapshot.hpp"

namespace sluice::engine::detail {

struct Kinds;

class EngineState {
 public:
  EngineState(const config::RuleSet& rules, const core::Clock* wall);

  std::vector<std::string> apply(config::RuleSet rules, core::Nanos now);

  std::shared_ptr<const Snapshot> snapshot() const { return current_.load(); }
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Decides `ask` at `now` against `snap` into `out` (reset first). kPending: the limits kept
  // in Redis are still to be asked; finish() completes `out` with the answer.
  Progress start(std::shared_ptr<const Snapshot> snap, const Ask& ask, core::Nanos now,
                 Outcome& out);
  // `answers`: one per query the outcome asked (Loop does this); their leases are taken.
  void finish(Outcome& out, std::span<backend::redis::Answer> answers);

  LeaseBook& leases() { return leases_; }
  const RuleCounters& throttle_counters() const { return throttle_counters_; }
  // Calls f(const CompiledLimit&) for each RLS limit override made so far.
  template <class F>
  void for_each_rls_override(F&& f) {
    rls_overrides_.for_each(f);
  }
  local::DynamicLimit<core::Gcra>& throttle() { return throttle_; }

 private:
  friend struct Kinds;       // the table of ask kinds (engine.cpp)
  const core::Clock* wall_;  // Unix time for calendar windows; null: `now` is Unix time
  Progress start_rule(const Snapshot& snap, const RuleAsk& a, core::Nanos now, Outcome& out);
  Progress start_inline(const Snapshot& snap, const InlineAsk& a, core::Nanos now, Outcome& out);
  Progress start_throttle(const Snapshot& snap, const ThrottleAsk& a, core::Nanos now,
                          Outcome& out);
  Progress start_rls(const Snapshot& snap, const RlsAsk& a, core::Nanos now, Outcome& out);
  // The limits that apply to each descriptor, into out.applied. False when the decision is
  // already made: a refused ask (out.verdict kInvalid) or a domain no rule knows (allowed).
  bool resolve_rls(const Snapshot& snap, const RlsAsk& a, Outcome& out);
  // A descriptor's own limit (made at its first use, kept for every later request with it).
  const CompiledLimit* rls_override(const Snapshot& snap, const RlsOverride& o, std::size_t index,
                                    Outcome& out);
  // CL.THROTTLE's parameters as a limit kept in Redis, one per distinct set.
  const CompiledLimit* throttle_limit(const Snapshot& snap, const ThrottleAsk& a,
                                      const core::Gcra::Params& params, Outcome& out);

  // The loops read it only when version_ moves (Loop::snapshot): its lock is off the hot path.
  support::SharedSlot<Snapshot> current_;
  std::atomic<std::uint64_t> version_{0};
  std::mutex apply_mutex_;
  LazyLimits inline_;
  LazyLimits throttle_remote_;
  LazyLimits rls_overrides_;
  // CL.THROTTLE: one TAT per key, whatever the parameters each call brings (redis-cell).
  local::DynamicLimit<core::Gcra> throttle_;
  LeaseBook leases_;
  RuleCounters throttle_counters_;  // CL.THROTTLE's decisions (rule "cl.throttle")
};

}  // namespace sluice::engine::detail
