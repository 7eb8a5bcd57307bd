// Store's concurrency permits held for running requests (sluice/backend/redis/store.hpp):
// released when the request ends, renewed every third of their lease TTL until then; and the
// plain commands the loop sends beside its decisions.
#include <algorithm>
#include <chrono>

#include "sluice/backend/redis/key_slot.hpp"
#include "sluice/backend/redis/store.hpp"
#include "store_parts.hpp"

namespace sluice::backend::redis {
namespace {

// A third of the lease: two renewals may fail (a Redis timeout, a failover) before it expires.
// At least 10 ms, so a tiny TTL cannot spin the loop.
core::Nanos renew_period(const RemoteLease& lease) {
  return std::max<core::Nanos>(lease.limit->options().concurrency_lease_ttl / 3,
                               10 * core::kNanosPerMilli);
}

std::string held_key(const RemoteLease& lease) {
  return lease.limit->state_key(lease.key) + '/' + std::to_string(lease.id);
}

}  // namespace

Store::Part Store::lease_part(RequestKind kind, const RemoteLease& lease) const {
  Part part;
  part.kind = kind;
  part.cost = lease.id;
  part.target = QueryItem{lease.limit, lease.key, 0};
  part.slot = options_.client.url.cluster ? key_slot(lease.limit->state_key(lease.key)) : 0;
  return part;
}

void Store::release(const RemoteLease& lease) {
  if (!held_.empty() && held_.erase(held_key(lease)) > 0) {
    stats_.held.store(static_cast<std::int64_t>(held_.size()), std::memory_order_relaxed);
  }
  pending_.push_back(lease_part(RequestKind::kRelease, lease));
  schedule_flush();
}

void Store::command(std::vector<std::string> args, const std::string& routing_key, Callback done) {
  client_->command(std::move(args), routing_key, std::move(done));
}

void Store::hold(const RemoteLease& lease, std::weak_ptr<const void> holder) {
  const core::Nanos due = options_.client.clock->now() + renew_period(lease);
  held_.insert_or_assign(held_key(lease), Held{lease, std::move(holder), due});
  stats_.held.store(static_cast<std::int64_t>(held_.size()), std::memory_order_relaxed);
  if (renew_at_ == 0 || due < renew_at_) arm_renewal(due);
}

void Store::arm_renewal(core::Nanos at) {
  renew_at_ = at;
  const core::Nanos wait = std::max<core::Nanos>(at - options_.client.clock->now(), 0);
  // Re-arming cancels the wait before: its handler sees operation_aborted and does nothing.
  renew_timer_.expires_after(std::chrono::nanoseconds(wait));
  renew_timer_.async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
        if (ec || alive.expired()) return;
        renew_at_ = 0;
        renew_due();
      });
}

void Store::renew_due() {
  const core::Nanos now = options_.client.clock->now();
  core::Nanos next = 0;
  for (auto it = held_.begin(); it != held_.end();) {
    Held& h = it->second;
    if (h.holder.expired()) {  // its request is gone without a release: give the permit back
      pending_.push_back(lease_part(RequestKind::kRelease, h.lease));
      it = held_.erase(it);
      continue;
    }
    if (h.due <= now) {
      pending_.push_back(lease_part(RequestKind::kRenew, h.lease));
      h.due = now + renew_period(h.lease);
    }
    if (next == 0 || h.due < next) next = h.due;
    ++it;
  }
  stats_.held.store(static_cast<std::int64_t>(held_.size()), std::memory_order_relaxed);
  if (!pending_.empty()) schedule_flush();
  if (next != 0) arm_renewal(next);
}

}  // namespace sluice::backend::redis
