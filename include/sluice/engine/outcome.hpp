// The engine's answer to one ask, for every frontend to put in its own protocol: the verdict,
// each limit's own decision with its quota, which limit decided, the wait or the retry, and the
// permits the request holds. A value the frontend keeps and reuses: for up to kInline limits,
// filling it allocates nothing.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/decision.hpp"
#include "sluice/engine/request_view.hpp"
#include "sluice/local/policy.hpp"

namespace sluice::engine {

// Limits a request usually meets at once: below this, an outcome allocates nothing.
inline constexpr std::size_t kInlineLimits = local::kInline;

struct CompiledLimit;
struct CompiledRoute;
struct RuleCounters;
struct Snapshot;

namespace detail {
struct Remote;  // the part kept in Redis: the query in flight, the permits held there
struct RemoteDeleter {
  void operator()(Remote* r) const;
};
}  // namespace detail

// One limit's part in the decision.
struct Applied {
  const CompiledLimit* limit = nullptr;
  const config::Rule* rule = nullptr;  // the configured rule (null for an inline limit)
  core::Decision decision;
  bool enforced = true;  // false: a dry-run rule or a shadow-mode RLS limit, never blocking
  RuleCounters* counters = nullptr;  // where the engine counts it
  std::uint32_t item = 0;            // an RLS ask: the descriptor it answers
};

enum class Verdict {
  kAllow,    // go on (forward, respond, answer "allowed") after `delay`
  kDeny,     // refused: over a limit, or a key the rule needs is missing (`missing_key`)
  kNoRoute,  // the gateway: no route matched
  kInvalid,  // the ask itself is wrong (unknown rule, bad limit, a cost that overflows)
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
  absl::InlinedVector<Applied, local::kInline> applied;  // enforced ones first, in route order
  int decided_by = -1;       // index in `applied`: the first limit that denied; -1 when none did
  bool missing_key = false;  // kDeny: decided_by's key was missing (on_missing_key: deny)

  // The gateway's answer: the route matched, and the status and body to send when it does not
  // forward (the denying rule's, the route's own `respond`, or 404).
  const CompiledRoute* route = nullptr;
  int status = 0;
  std::string_view body;

  // kInvalid: what is wrong, and which field of the ask ("rule", "limit", "cost").
  std::string error;
  std::string_view error_field;

  // A concurrency permit kept for the caller of the decision service: the token that gives it
  // back (Engine::release_lease), and how long it is kept if never given back.
  std::string lease_token;
  core::Nanos lease_ttl = 0;

  std::string_view client() const { return client_.text(); }
  bool dry_run_denied() const;  // a dry-run rule would have refused this request

  // Keeps `route`, `body` and the limits alive.
  std::shared_ptr<const Snapshot> snapshot;
  local::Leases leases;  // concurrency permits held until the response is done

  // Drops everything (local permits go back; Redis permits go back through Loop::release).
  void reset();

  // The engine's own.
  CanonicalAddress client_;
  std::unique_ptr<detail::Remote, detail::RemoteDeleter> remote;
};

}  // namespace sluice::engine
