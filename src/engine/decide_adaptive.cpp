// A route's adaptive concurrency limit in the gateway's decision (internal.hpp): the request's
// tier, the bypass list, and the permit taken after the rules allowed, given back with what
// the upstream did.
#include "adaptive_gate.hpp"
#include "internal.hpp"
#include "sluice/proto/http/field_values.hpp"

namespace sluice::engine::detail {

namespace {

bool in(std::span<const config::Cidr> nets, const CanonicalAddress& a) {
  for (const auto& net : nets) {
    if (net.contains(a)) return true;
  }
  return false;
}

// The tier `value` names ("0" .. "9"); nullopt for anything else.
std::optional<int> tier_of(std::string_view value) {
  value = proto::http::trim_ows(value);
  if (value.size() != 1 || value[0] < '0' || value[0] > '0' + config::kTopTier) {
    return std::nullopt;
  }
  return value[0] - '0';
}

void refuse_adaptive(Outcome& out) {
  const config::AdaptiveConcurrency& c = OutcomeAccess::adaptive(out).gate->config();
  out.verdict = Verdict::kDeny;
  out.status = c.status;
  out.body = c.body;
  out.queued = 0;
  OutcomeAccess::adaptive(out).gate.reset();
}

adaptive::Outcome sample_outcome(UpstreamResult r) {
  switch (r) {
    case UpstreamResult::kAnswered:
      return adaptive::Outcome::kSuccess;
    case UpstreamResult::kFailed:
      return adaptive::Outcome::kDropped;
    case UpstreamResult::kNone:
      break;
  }
  return adaptive::Outcome::kIgnored;
}

}  // namespace

void classify_adaptive(const CompiledRoute& route, const RequestView& r,
                       std::span<const config::Cidr> trusted, Outcome& out) {
  const config::AdaptiveConcurrency& c = *route.route.adaptive;
  if (in(c.bypass, OutcomeAccess::client(out))) return;  // never limited
  AdaptiveHold& hold = OutcomeAccess::adaptive(out);
  hold.gate = route.gate;
  hold.tier = c.priority;
  if (c.priority_header.empty()) return;
  // Only a trusted proxy may say how important a request is: anyone else could claim the top.
  CanonicalAddress peer;
  if (!peer.parse(r.peer) || !in(trusted, peer)) return;
  if (auto v = find_header(r, c.priority_header)) {
    if (auto t = tier_of(*v)) hold.tier = *t;
  }
}

void admit_adaptive(Outcome& out, core::Nanos now) {
  AdaptiveHold& hold = OutcomeAccess::adaptive(out);
  if (!hold.gate) return;
  AdaptiveGate::Permit permit;
  switch (hold.gate->acquire(hold.tier, now, permit, hold.ticket)) {
    case AdaptiveGate::Admit::kGranted:
      hold.held = true;
      hold.start = permit.start;
      hold.in_flight = permit.in_flight;
      return;
    case AdaptiveGate::Admit::kQueued:
      out.queued = hold.gate->config().max_wait;
      return;
    case AdaptiveGate::Admit::kRefused:
      refuse_adaptive(out);
      return;
  }
}

void wake_on_grant(Outcome& out, std::function<void()> wake) {
  AdaptiveHold& hold = OutcomeAccess::adaptive(out);
  if (hold.gate && hold.ticket != 0) hold.gate->on_grant(hold.ticket, std::move(wake));
}

void claim_adaptive(Outcome& out) {
  AdaptiveHold& hold = OutcomeAccess::adaptive(out);
  hold.cancel_wait = nullptr;
  if (!hold.gate || hold.ticket == 0) return;
  if (hold.left) {
    // Its client went while it waited: its place (or a permit handed over meanwhile) goes
    // back unused, neither a sample nor a refusal.
    out.queued = 0;
    release_adaptive(out, UpstreamResult::kNone, 0);
    return;
  }
  AdaptiveGate::Permit permit;
  const bool granted = hold.gate->claim(hold.ticket, permit);
  hold.ticket = 0;
  out.queued = 0;
  if (!granted) {
    refuse_adaptive(out);
    return;
  }
  hold.held = true;
  hold.start = permit.start;
  hold.in_flight = permit.in_flight;
}

void release_adaptive(Outcome& out, UpstreamResult result, core::Nanos now) {
  AdaptiveHold& hold = OutcomeAccess::adaptive(out);
  if (!hold.gate) return;
  if (hold.ticket != 0) {
    AdaptiveGate::Permit permit;
    if (hold.gate->claim(hold.ticket, permit, /*shed=*/false)) {
      hold.gate->release(permit, 0, adaptive::Outcome::kIgnored);
    }
  } else if (hold.held) {
    hold.gate->release({hold.start, hold.in_flight}, now, sample_outcome(result));
  }
  hold = {};
}

}  // namespace sluice::engine::detail
