// Outcome (sluice/engine/outcome.hpp): what a frontend reads of it, and the permits it holds in
// place.
#include "sluice/engine/outcome.hpp"

#include <memory>
#include <new>

#include "internal.hpp"
#include "keys.hpp"
#include "sluice/table/key_hash.hpp"

namespace sluice::engine {

static_assert(sizeof(local::Leases) <= HeldPermits::kBytes, "HeldPermits::kBytes too small");
static_assert(alignof(local::Leases) <= 16, "HeldPermits' storage is 16-byte aligned");

HeldPermits::HeldPermits() { new (storage_) local::Leases(); }

HeldPermits::~HeldPermits() { std::destroy_at(&detail::OutcomeAccess::leases(*this)); }

HeldPermits::HeldPermits(HeldPermits&& other) noexcept {
  new (storage_) local::Leases(std::move(detail::OutcomeAccess::leases(other)));
}

HeldPermits& HeldPermits::operator=(HeldPermits&& other) noexcept {
  if (this != &other) {
    detail::OutcomeAccess::leases(*this) = std::move(detail::OutcomeAccess::leases(other));
  }
  return *this;
}

bool HeldPermits::empty() const {
  return std::launder(reinterpret_cast<const local::Leases*>(storage_))->empty();
}

void HeldPermits::clear() { detail::OutcomeAccess::leases(*this).clear(); }

std::string_view error_field(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return {};
    case ErrorKind::kUnknownRule:
      return "rule";
    case ErrorKind::kBadLimit:
      return "limit";
    case ErrorKind::kBadCost:
      return "cost";
    case ErrorKind::kBadArguments:
      return "arguments";
    case ErrorKind::kBadQuantity:
      return "quantity";
    case ErrorKind::kBusy:
      return "key";
    case ErrorKind::kBadDomain:
      return "domain";
    case ErrorKind::kBadDescriptor:
      return "descriptors";
    case ErrorKind::kTooManyDescriptors:
      return "max_descriptors";
    case ErrorKind::kExhausted:
      return "exhausted";
    case ErrorKind::kNotResettable:
    case ErrorKind::kNotSettlable:
      return "rule";
    case ErrorKind::kUnavailable:
      return "storage";
    case ErrorKind::kNoBlocks:
      return "on_deny";
  }
  return {};
}

Outcome::~Outcome() { detail::release_adaptive(*this, UpstreamResult::kNone, 0); }

void Outcome::reset() {
  detail::release_adaptive(*this, UpstreamResult::kNone, 0);
  queued = 0;
  verdict = Verdict::kAllow;
  total = core::Decision{true, 0, -1, 0, 0, -1};
  delay = 0;
  applied.clear();
  decided_by = -1;
  missing_key = false;
  key_seen = false;
  status = 0;
  body = {};
  error_kind = ErrorKind::kNone;
  error.clear();
  lease_token.clear();
  lease_ttl = 0;
  route_ = nullptr;
  asked_at_ = 0;
  permits_.clear();
  if (remote_) {  // kept, cleared, for the next decision (detail::take_remote)
    remote_->clear();
    spare_remote_ = std::move(remote_);
  }
  settle_.clear();
  client_ = CanonicalAddress();
  snapshot_.reset();
}

bool Outcome::dry_run_denied() const {
  for (const Applied& a : applied) {
    if (!a.enforced && !a.decision.allowed) return true;
  }
  return false;
}

const config::RuleSet& Outcome::rules() const { return snapshot_->rules; }

std::uint64_t Outcome::version() const { return snapshot_->version; }

const config::Route* Outcome::route() const { return route_ != nullptr ? &route_->route : nullptr; }

const config::Upstream* Outcome::upstream() const {
  return route_ != nullptr ? route_->upstream : nullptr;
}

bool Outcome::log_key(const Applied& a, const RequestView& r, std::string& out) const {
  out.clear();
  if (a.rule == nullptr || route_ == nullptr) return false;
  if (!detail::request_key_text(a.rule->key, r, client(), route_->route.name, out)) {
    out.clear();
    return false;
  }
  if (a.rule->log_key == config::LogKey::kHash) detail::hash_hex(table::hash_key(out).bucket, out);
  return true;
}

}  // namespace sluice::engine
