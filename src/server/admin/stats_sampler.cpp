// StatsSampler (stats_sampler.hpp).
#include "stats_sampler.hpp"

#include <boost/asio/post.hpp>
#include <chrono>
#include <map>
#include <string_view>
#include <utility>

namespace sluice::server {
namespace {

using Key = std::pair<SeriesKind, std::string>;

// The outcomes the dashboard draws, by the counter's `outcome` label (missing_key is not one).
std::uint64_t* field(OutcomeCounts& c, std::string_view outcome) {
  static constexpr std::pair<std::string_view, std::uint64_t OutcomeCounts::*> kRows[] = {
      {"allowed", &OutcomeCounts::allowed},
      {"denied", &OutcomeCounts::denied},
      {"delayed", &OutcomeCounts::delayed},
      {"dry_run_denied", &OutcomeCounts::dry_run_denied}};
  for (const auto& [name, member] : kRows) {
    if (name == outcome) return &(c.*member);
  }
  return nullptr;
}

}  // namespace

std::vector<SeriesTotal> decision_totals(const metrics::Registry& registry) {
  std::map<Key, OutcomeCounts> sums;
  for (const auto& s : registry.samples({"sluice_rule_requests_total"})) {
    std::string_view frontend, route, rule, outcome;
    for (const auto& [k, v] : s.labels) {
      if (k == "frontend") frontend = v;
      if (k == "route") route = v;
      if (k == "rule") rule = v;
      if (k == "outcome") outcome = v;
    }
    const auto n = static_cast<std::uint64_t>(s.value);
    if (auto* f = field(sums[Key{SeriesKind::kRule, std::string(rule)}], outcome)) *f += n;
    if (frontend == "gateway" && !route.empty()) {
      if (auto* f = field(sums[Key{SeriesKind::kRoute, std::string(route)}], outcome)) *f += n;
    }
  }
  std::vector<SeriesTotal> out;
  out.reserve(sums.size());
  for (auto& [key, total] : sums) out.push_back(SeriesTotal{key.first, key.second, total});
  return out;
}

StatsSampler::StatsSampler(boost::asio::any_io_executor io, const metrics::Registry& registry,
                           const core::Clock& wall)
    : registry_(registry), wall_(wall), timer_(io) {}

void StatsSampler::start() {
  sample();
  timer_.expires_after(std::chrono::seconds(1));
  arm();
}

void StatsSampler::start_once() {
  if (started_) return;
  started_ = true;
  start();
}

void StatsSampler::stop() {
  boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

// Each deadline one second after the last, so the samples do not drift from the seconds.
void StatsSampler::arm() {
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    self->sample();
    self->timer_.expires_at(self->timer_.expiry() + std::chrono::seconds(1));
    self->arm();
  });
}

void StatsSampler::sample() {
  auto totals = decision_totals(registry_);
  const std::int64_t second = wall_.now() / core::kNanosPerSecond;
  std::lock_guard lock(mutex_);
  history_.sample(second, totals);
}

StatsHistory::Window StatsSampler::since(std::int64_t since) const {
  std::lock_guard lock(mutex_);
  return history_.since(since);
}

std::size_t StatsSampler::memory_bytes() const {
  std::lock_guard lock(mutex_);
  return history_.memory_bytes();
}

}  // namespace sluice::server
