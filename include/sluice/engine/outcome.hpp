// The engine's answer to one ask, for every frontend to put in its own protocol: the verdict,
// each limit's own decision with its quota, which limit decided, the wait or the retry, and the
// permits the request holds. A value the frontend keeps and reuses: for up to kInlineLimits
// limits, filling it allocates nothing. What only the engine reads of it is private.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/engine/quota.hpp"
#include "sluice/engine/request_view.hpp"
#include "sluice/engine/top_keys.hpp"

namespace sluice::engine {

// Limits a request usually meets at once: below this, an outcome allocates nothing.
inline constexpr std::size_t kInlineLimits = 8;

struct CompiledLimit;
struct CompiledRoute;
struct RuleCounters;
struct Snapshot;

namespace detail {
struct Remote;  // the part kept in Redis: the query in flight, the permits held there
struct RemoteDeleter {
  void operator()(Remote* r) const;
};
struct OutcomeAccess;  // the engine's way in (internal.hpp)
class AdaptiveGate;    // a route's adaptive concurrency limit (adaptive_gate.hpp)
// What a request holds of its route's adaptive limit: a permit (when it was handed out, with
// how many in flight) or its place in the queue; and its tier.
struct AdaptiveHold {
  std::shared_ptr<AdaptiveGate> gate;
  core::Nanos start = 0;
  std::int64_t in_flight = 0;
  std::uint64_t ticket = 0;  // > 0: queued
  int tier = 0;
  bool held = false;  // a permit to give back
  // While queued: ends the wait at once (Loop::leave_queue); `left`: its client went first.
  std::function<void()> cancel_wait;
  bool left = false;
};
// A rule of the request whose cost is settled after the response (cost_from, count_if):
// which of `applied` it is, what admission charged, where, and its key in the rule's table (a
// rule kept in Redis: its key is its query item's, in the outcome's Remote).
struct Settlement {
  enum class Where : std::uint8_t {
    kTable,     // the rule's local table
    kRedis,     // Redis, which admitted it
    kFallback,  // the local fallback of a Redis rule (on_failure: local), which admitted it
  };
  std::uint32_t applied = 0;
  Where where = Where::kTable;
  std::int64_t reserved = 0;
  std::uint64_t bucket = 0;
  std::uint64_t fingerprint = 0;
};
}  // namespace detail

// What a forwarded request told of its upstream, for the route's adaptive limit: it answered
// (a latency sample), it failed (5xx, timeout: a loss), or nothing (not forwarded, client gone).
enum class UpstreamResult { kAnswered, kFailed, kNone };

// What a frontend may know of a limit that took part in a decision.
struct LimitView {
  std::string_view name;   // the rule's, the RLS limit's, or an inline limit's canonical spec
  Quota quota;             // what its RateLimit-Policy item promises
  bool unlimited = false;  // an RLS `unlimited` limit: answers OK, counts nothing
  const config::RlsRateLimit* rls = nullptr;  // an RLS limit: its rate_limit as configured
};

// A rule's key as its top-keys sketch takes it: the hash the access log shows under log_key:
// hash (table::hash_key's bucket half, of the whole key) and the key's first bytes, kept in
// place so that noting it allocates nothing.
struct KeyTag {
  std::uint64_t hash = 0;
  std::uint8_t size = 0;
  bool set = false;  // false: nothing to note (an inline limit, a key the request lacks)
  char text[TopKeys::kKeyBytes];

  // The key's text, cut to kKeyBytes, in pieces.
  void clear(std::uint64_t key_hash);
  void append(std::string_view piece);
};

// One limit's part in the decision.
class Applied {
 public:
  LimitView limit;
  const config::Rule* rule = nullptr;  // the configured rule (null for an inline limit)
  core::Decision decision;
  bool enforced = true;  // false: a dry-run rule or a shadow-mode RLS limit, never blocking
  // Admitted by its fail-open policy while Redis did not answer: nothing was counted, so the
  // decision's numbers say nothing of what is left (its RateLimit item gives no status).
  bool unmetered = false;
  std::uint32_t item = 0;  // an RLS ask: the descriptor it answers

 private:
  friend struct detail::OutcomeAccess;
  const CompiledLimit* compiled_ = nullptr;
  RuleCounters* counters_ = nullptr;  // where the engine counts it
  KeyTag key_;                        // what its rule's top keys note
};

enum class Progress {
  kDone,     // the outcome is complete
  kPending,  // it waits for Redis: Loop::async_complete finishes it
};

enum class Verdict {
  kAllow,    // go on (forward, respond, answer "allowed") after `delay`
  kDeny,     // refused: over a limit, or a key the rule needs is missing (`missing_key`)
  kNoRoute,  // the gateway: no route matched
  kInvalid,  // the ask cannot be decided: `error_kind` says why, `error` in words
};

// Why an ask was not decided (Verdict::kInvalid), for a frontend to choose its answer (404 for
// an unknown rule, RESOURCE_EXHAUSTED for a full table of overrides...).
enum class ErrorKind {
  kNone,
  kUnknownRule,         // no rule of that name
  kBadLimit,            // an inline limit that does not parse, or too many of them
  kBadCost,             // a cost too large for the limit (its wait leaves the time range)
  kBadArguments,        // CL.THROTTLE parameters that make no limit
  kBadQuantity,         // CL.THROTTLE: a quantity too large for the rate
  kBusy,                // CL.THROTTLE: every slot of the key's bucket is held; try again
  kBadDomain,           // RLS: an empty domain
  kBadDescriptor,       // RLS: no descriptors, or one that cannot be decided
  kTooManyDescriptors,  // RLS: more descriptors than rls.max_descriptors
  kExhausted,           // a bounded resource is full: RLS overrides, held permits
  kNotResettable,       // a KeyAsk reset of a concurrency rule (its permits go back by release)
  kUnavailable,         // a KeyAsk on a rule kept in Redis while Redis does not answer
  kNoBlocks,            // a KeyAsk on the block of a rule without on_deny: block
  kNotSettlable,        // a KeyAsk report on a rule that cannot settle (algorithm, leasing)
};

// The ask's field an error is about, as the check API names it ("rule", "limit", "cost").
std::string_view error_field(ErrorKind kind);

// The concurrency permits a request holds, kept in place (the local layer's leases: only the
// engine sees their type), so that an outcome allocates nothing. Given back when cleared.
class HeldPermits {
 public:
  HeldPermits();
  ~HeldPermits();
  HeldPermits(HeldPermits&& other) noexcept;
  HeldPermits& operator=(HeldPermits&& other) noexcept;
  HeldPermits(const HeldPermits&) = delete;
  HeldPermits& operator=(const HeldPermits&) = delete;

  bool empty() const;
  void clear();

  static constexpr std::size_t kBytes = 96;

 private:
  friend struct detail::OutcomeAccess;
  alignas(16) unsigned char storage_[kBytes];
};

class Outcome {
 public:
  Outcome() = default;
  Outcome(Outcome&&) noexcept = default;
  Outcome& operator=(Outcome&&) noexcept = default;
  ~Outcome();

  Verdict verdict = Verdict::kAllow;
  core::Decision total;   // the request's combined decision
  core::Nanos delay = 0;  // kAllow: how long to hold the request first
  absl::InlinedVector<Applied, kInlineLimits> applied;  // enforced ones first, in route order
  int decided_by = -1;       // index in `applied`: the first limit that denied; -1 when none did
  bool missing_key = false;  // kDeny: decided_by's key was missing (on_missing_key: deny)
  bool key_seen = false;     // a KeyAsk: the key had state (false: never seen, or expired)

  // The gateway's answer: the status and body to send when it does not forward (the denying
  // rule's, the route's own `respond`, or 404).
  int status = 0;
  std::string_view body;

  // kInvalid: why, and in words.
  ErrorKind error_kind = ErrorKind::kNone;
  std::string error;

  // A concurrency permit kept for the caller of the decision service: the token that gives it
  // back (Engine::release_lease), and how long it is kept if never given back.
  std::string lease_token;
  core::Nanos lease_ttl = 0;

  // kAllow on a route with adaptive_concurrency whose limit is reached: wait up to this long
  // for a permit (Loop::async_permit) before forwarding; 0: nothing to wait for.
  core::Nanos queued = 0;

  std::string_view client() const { return client_.text(); }
  bool dry_run_denied() const;  // a dry-run rule would have refused this request

  // The rules the ask was decided under (kept alive with the outcome, as `body` and the
  // configured rules it points to are), and their version.
  const config::RuleSet& rules() const;
  std::uint64_t version() const;
  // The gateway: the route the request matched, and its upstream (null: it responds itself).
  const config::Route* route() const;
  const config::Upstream* upstream() const;
  // The access log: the key the rule of `a` (one of `applied`) had in request `r`, as that
  // rule's log_key says: its text, or its hash (64 bits of its XXH3-128 in 16 hex digits, the same
  // on every instance). False (`out` empty) for an inline limit or a key the request lacks.
  bool log_key(const Applied& a, const RequestView& r, std::string& out) const;

  // Whether it holds a decision (and what that keeps alive) until reset().
  bool in_use() const { return snapshot_ != nullptr; }
  // Drops everything (local permits go back; Redis permits go back through Loop::release).
  void reset();

 private:
  friend struct detail::OutcomeAccess;
  std::shared_ptr<const Snapshot> snapshot_;
  const CompiledRoute* route_ = nullptr;
  core::Nanos asked_at_ = 0;  // the `now` it was decided at (the top keys' minute)
  HeldPermits permits_;       // concurrency permits held until the response is done
  CanonicalAddress client_;
  std::unique_ptr<detail::Remote, detail::RemoteDeleter> remote_;
  std::unique_ptr<detail::Remote, detail::RemoteDeleter> spare_remote_;  // remote_, cleared
  detail::AdaptiveHold adaptive_;                      // given back by Loop::release or reset()
  absl::InlinedVector<detail::Settlement, 1> settle_;  // engine/settle.hpp; cleared once settled
};

}  // namespace sluice::engine
