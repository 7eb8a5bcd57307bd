// AdaptiveGate (adaptive_gate.hpp): admission, the queue by tier, and the samples fed to the
// algorithm. Envoy's timers fire lazily, at the next admission or finished request after they
// are due (no traffic: nothing to limit, and no sample to learn from).
#include "adaptive_gate.hpp"

#include <algorithm>

#include "sluice/adaptive/named_limit.hpp"

namespace sluice::engine::detail {

namespace {

constexpr core::Nanos kRttWindow = 10 * core::kNanosPerSecond;

}  // namespace

core::Expected<AnyLimit> make_adaptive_limit(const config::AdaptiveConcurrency& c, core::Nanos now,
                                             std::uint64_t seed) {
  adaptive::LimitSettings s;
  s.initial = c.initial;
  s.min_limit = c.min_limit;
  s.max_limit = c.max_limit;
  s.min_rtt_interval = c.min_rtt_interval;
  switch (c.algorithm) {
    case config::AdaptiveAlgorithm::kEnvoyGradient:
      return adaptive::start_with<adaptive::EnvoyGradient>(s, now, seed);
    case config::AdaptiveAlgorithm::kVegas:
      return adaptive::start_with<adaptive::Vegas>(s, now, seed);
    case config::AdaptiveAlgorithm::kGradient2:
      return adaptive::start_with<adaptive::Gradient2>(s, now, seed);
    case config::AdaptiveAlgorithm::kAimd:
      return adaptive::start_with<adaptive::Aimd>(s, now, seed);
  }
  return core::make_error("unknown algorithm");
}

AdaptiveGate::AdaptiveGate(const config::AdaptiveConcurrency& c, AnyLimit limit)
    : config_(c), limit_(std::move(limit)) {
  current_ = adaptive::current_limit(limit_);
}

std::int64_t AdaptiveGate::advance(core::Nanos now) {
  current_ = adaptive::advance_limit(limit_, now);
  return current_;
}

AdaptiveGate::Admit AdaptiveGate::acquire(int tier, core::Nanos now, Permit& permit,
                                          std::uint64_t& ticket) {
  tier = std::clamp(tier, 0, config::kTopTier);
  std::vector<std::function<void()>> wakes;
  Admit admit = Admit::kRefused;
  {
    std::lock_guard lock(mutex_);
    advance(now);
    hand_over(now, wakes);
    if (queued_ == 0 && in_flight_ < current_) {
      ++in_flight_;
      permit = {now, in_flight_};
      admit = Admit::kGranted;
    } else if (config_.max_wait > 0 && queued_ < config_.max_queue) {
      ticket = next_ticket_++;
      queue_[static_cast<std::size_t>(tier)].push_back({ticket, {}});
      tier_of_.emplace(ticket, tier);
      ++queued_;
      admit = Admit::kQueued;
    } else {
      shed_[static_cast<std::size_t>(tier)].fetch_add(1, std::memory_order_relaxed);
    }
  }
  for (auto& w : wakes) w();
  return admit;
}

void AdaptiveGate::on_grant(std::uint64_t ticket, std::function<void()> wake) {
  {
    std::lock_guard lock(mutex_);
    const auto t = tier_of_.find(ticket);
    if (t != tier_of_.end()) {
      for (Waiter& w : queue_[static_cast<std::size_t>(t->second)]) {
        if (w.ticket == ticket) w.wake = std::move(wake);
      }
      return;
    }
    if (!granted_.contains(ticket)) return;  // claimed already
  }
  wake();  // granted before its wake was given
}

bool AdaptiveGate::claim(std::uint64_t ticket, Permit& permit, bool shed) {
  std::lock_guard lock(mutex_);
  if (const auto g = granted_.find(ticket); g != granted_.end()) {
    permit = g->second.permit;
    granted_.erase(g);
    return true;
  }
  const auto t = tier_of_.find(ticket);
  if (t == tier_of_.end()) return false;
  auto& q = queue_[static_cast<std::size_t>(t->second)];
  q.erase(std::find_if(q.begin(), q.end(), [&](const Waiter& w) { return w.ticket == ticket; }));
  if (shed) shed_[static_cast<std::size_t>(t->second)].fetch_add(1, std::memory_order_relaxed);
  tier_of_.erase(t);
  --queued_;
  return false;
}

void AdaptiveGate::hand_over(core::Nanos now, std::vector<std::function<void()>>& wakes) {
  for (std::size_t tier = queue_.size(); tier-- > 0 && in_flight_ < current_;) {
    auto& q = queue_[tier];
    while (!q.empty() && in_flight_ < current_) {
      Waiter w = std::move(q.front());
      q.pop_front();
      tier_of_.erase(w.ticket);
      --queued_;
      ++in_flight_;
      granted_.emplace(w.ticket, Granted{{now, in_flight_}, w.wake != nullptr});
      if (w.wake) wakes.push_back(std::move(w.wake));
    }
  }
}

void AdaptiveGate::release(const Permit& p, core::Nanos now, adaptive::Outcome outcome) {
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
    if (now > 0) {
      const adaptive::Sample sample{p.start, std::max<core::Nanos>(0, now - p.start), p.in_flight,
                                    outcome};
      adaptive::learn(limit_, sample);
      if (outcome == adaptive::Outcome::kSuccess) note_rtt(sample.rtt, now);
      advance(now);
    }
    hand_over(now, wakes);
  }
  for (auto& w : wakes) w();
}

void AdaptiveGate::note_rtt(core::Nanos rtt, core::Nanos now) {
  if (now - rtt_window_start_ >= kRttWindow) {
    min_rtt_last_ = min_rtt_now_;
    min_rtt_now_ = 0;
    rtt_window_start_ = now;
  }
  if (min_rtt_now_ == 0 || rtt < min_rtt_now_) min_rtt_now_ = rtt;
}

AdaptiveGate::Gauges AdaptiveGate::gauges() const {
  Gauges g;
  std::lock_guard lock(mutex_);
  g.limit = current_;
  g.in_flight = in_flight_;
  g.queued = queued_;
  g.min_rtt = min_rtt_last_ == 0  ? min_rtt_now_
              : min_rtt_now_ == 0 ? min_rtt_last_
                                  : std::min(min_rtt_now_, min_rtt_last_);
  for (std::size_t i = 0; i < g.shed.size(); ++i) {
    g.shed[i] = shed_[i].load(std::memory_order_relaxed);
  }
  return g;
}

}  // namespace sluice::engine::detail
