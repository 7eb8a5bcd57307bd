// A limit whose state lives in Redis, shared by every Sluice instance: its script form, how
// its keys are named, and what it does when Redis fails (open, closed, or a local fallback).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/backend/redis/script_codec.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/local/policy.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis {

// What a decision does when Redis errors, times out, or the breaker is open.
enum class FailurePolicy {
  kOpen,    // allow (Spring Cloud Gateway, Envoy's failure_mode_deny=false, Kong fault_tolerant)
  kClosed,  // deny: protect the upstream over availability
  kLocal,   // decide with an in-process limiter at `local_share` of the rate (Sentinel's
            // fallbackToLocalWhenFail, rate-limiter-flexible's insuranceLimiter)
};

std::string_view failure_policy_name(FailurePolicy p);
core::Expected<FailurePolicy> parse_failure_policy(std::string_view text);

// What a change of the limit's numbers does to its keys' states in Redis (a rule's on_change).
enum class OnChange {
  kKeep,          // the same keys, their states read under the new numbers as they are
  kReset,         // keys named by the limit (state_key): a new limit starts on fresh keys
  kProportional,  // each state records its numbers; another limit's is rescaled when met
};

struct RemoteLimitOptions {
  FailurePolicy on_failure = FailurePolicy::kOpen;
  // kLocal: this instance's share of the rate and burst while Redis is away (with N instances
  // behind a balancer, 1/N keeps the total near the limit).
  double local_share = 1.0;
  // Leasing: permits taken from Redis per round trip and spent locally; 0 = exact (every
  // decision goes to Redis).
  std::int64_t lease = 0;
  // How long leased permits may be spent before they are dropped (bounds how stale they get).
  core::Nanos lease_ttl = 100 * core::kNanosPerMilli;
  // Concurrency limits: how long Redis keeps a lease whose holder never released it.
  core::Nanos concurrency_lease_ttl = 60 * core::kNanosPerSecond;
  // A refused request is charged as if admitted (a rule's count_denied), in Redis and by the
  // local fallback alike; its denials are never answered from the denial cache.
  bool count_denied = false;
  // A key it refuses is blocked this long, in Redis for every instance (a rule's on_deny:
  // block); 0 = no blocks.
  core::Nanos block = 0;
  // The rule's list of blocks (block_list.hpp) this limit's blocks are added to; empty: not
  // listed (a tier's blocks: its keys' blocks are the tier limit's own).
  std::string block_list;
  // Memory of the local fallback's table.
  std::size_t fallback_memory = 4u << 20;
  OnChange on_change = OnChange::kKeep;
};

class RemoteLimit {
 public:
  // Errors: an algorithm the fallback or leasing cannot take, a share outside (0, 1].
  // `replaced`: the limit this one replaces (a reload, a PUT); with on_change: proportional,
  // states that record no numbers (written under keep) are rescaled from its numbers.
  static core::Expected<std::shared_ptr<const RemoteLimit>> make(
      std::string name, spec::LimitSpec spec, RemoteLimitOptions options,
      const spec::LimitSpec* replaced = nullptr);

  const std::string& name() const { return name_; }
  const spec::LimitSpec& spec() const { return spec_; }
  const RemoteLimitOptions& options() const { return options_; }
  const ScriptLimit& script() const { return script_; }

  // "sluice:{NAME:KEY}:ALGORITHM": the hash tag spreads a limit's keys over the cluster's
  // slots; a retuned limit (same algorithm) keeps its keys' states. With on_change: reset,
  // ":TAG" follows, the first 8 hex digits of the SHA-1 of the canonical limit text: a changed
  // limit counts on new keys (in the same slot) and the old ones expire by their TTL.
  std::string state_key(std::string_view key) const;
  // The same into `out` (replacing what it held): a caller's reused buffer, no allocation.
  void state_key_into(std::string& out, std::string_view key) const;

  // A calendar window's calendar (its script limit takes the bounds around the ask's Unix
  // time, with_calendar_bounds); null for every other limit.
  const core::Calendar* calendar() const;

  // The in-process stand-in for kLocal (thread-safe); null for other policies.
  local::Policy* fallback() const { return fallback_.get(); }

  // Bumped when a key's state is reset from outside a decision (the admin API): the denials
  // each store keeps of this limit's keys stop holding (Store::decide's denial cache).
  std::uint64_t resets() const { return resets_.load(std::memory_order_acquire); }
  void count_reset() const { resets_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  RemoteLimit() = default;
  std::string name_;
  std::string key_suffix_;  // ":TAG" with on_change: reset
  spec::LimitSpec spec_;
  RemoteLimitOptions options_;
  ScriptLimit script_;
  std::unique_ptr<local::Policy> fallback_;
  mutable std::atomic<std::uint64_t> resets_{0};
};

// The spec at `share` of its rate and capacity (rate, burst and limit scaled, each at least
// 1 where it was), for the local fallback.
core::Expected<spec::LimitSpec> scaled_spec(const spec::LimitSpec& spec, double share);

}  // namespace sluice::backend::redis
