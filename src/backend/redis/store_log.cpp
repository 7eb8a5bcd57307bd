// Store's server log lines (sluice/backend/redis/store.hpp): the breaker opening when Redis is
// lost and closing when it is back, with the failure policy in force, once per change; the
// requests fail-open admitted and the settlements lost, a count per rule at most once a second.
#include "sluice/backend/redis/store.hpp"
#include "sluice/log/log.hpp"

namespace sluice::backend::redis {

void Store::log_breaker_change(core::Nanos now) {
  const Breaker::State state = breaker_.state();
  if (state == Breaker::State::kHalfOpen || state == logged_state_) return;  // a probe: no news
  if (logged_once_ && now - logged_at_ < core::kNanosPerSecond) return;
  logged_state_ = state;
  logged_at_ = now;
  logged_once_ = true;
  const std::string where = proto::resp::format_store_url(options_.client.url);
  const std::string& policy = options_.on_failure;
  if (state == Breaker::State::kOpen) {
    log::warn("sluice: redis lost, breaker open: decisions follow the failure policy",
              {{"redis", where},
               {"breaker", "open"},
               {"on_failure", policy},
               {"opens", static_cast<std::int64_t>(breaker_.opens())}});
  } else {
    log::info("sluice: redis recovered, breaker closed",
              {{"redis", where}, {"breaker", "closed"}, {"on_failure", policy}});
  }
}

void Store::log_fail_open(const std::string& rule, core::Nanos now) {
  const std::int64_t n = fail_open_[rule].note(now);
  if (n == 0) return;
  log::warn("sluice: redis unavailable, fail-open admitted requests without a limit",
            {{"rule", rule}, {"admitted", n}, {"on_failure", "fail-open"}});
}

void Store::log_lost_settlement(const std::string& rule, core::Nanos now) {
  const std::int64_t n = lost_[rule].note(now);
  if (n == 0) return;
  log::warn("sluice: redis unavailable, settlements lost: what admission reserved stands for them",
            {{"rule", rule}, {"lost", n}});
}

}  // namespace sluice::backend::redis
