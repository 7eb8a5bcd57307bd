// collect_store_metrics (sluice/backend/redis/store.hpp): one loop's Redis counters as
// registry samples; the registry sums the loops.
#include "sluice/backend/redis/store.hpp"

namespace sluice::backend::redis {
namespace {

using metrics::Family;
using metrics::Kind;

constexpr Family kAnswers{
    "sluice_redis_answers_total", Kind::kCounter,
    "Decisions on rules kept in Redis, by where the answer came from: redis, "
    "lease (leased permits), fail_open, fail_closed, local (fallback limiter), denial_cache (a "
    "refusal Redis gave, kept until its retry time: redis.cache_denials)."};
constexpr Family kBreakerLoops{"sluice_redis_breaker_loops", Kind::kGauge,
                               "Event loops whose breaker is in each state."};

struct Counter {
  Family family;
  std::uint64_t (*get)(const Store::Stats&);
};
constexpr Counter kCounters[] = {
    {{"sluice_redis_scripts_total", Kind::kCounter,
      "EVALSHA calls (each carries a batch of decisions)."},
     [](const Store::Stats& s) { return s.scripts.load(std::memory_order_relaxed); }},
    {{"sluice_redis_scripted_requests_total", Kind::kCounter, "Requests carried by those calls."},
     [](const Store::Stats& s) { return s.scripted_requests.load(std::memory_order_relaxed); }},
    {{"sluice_redis_lease_takes_total", Kind::kCounter,
      "Round trips that took a batch of leased permits."},
     [](const Store::Stats& s) { return s.takes.load(std::memory_order_relaxed); }},
    {{"sluice_redis_failures_total", Kind::kCounter,
      "Script calls that failed (error, timeout, connection)."},
     [](const Store::Stats& s) { return s.failures.load(std::memory_order_relaxed); }},
    {{"sluice_redis_breaker_opens_total", Kind::kCounter,
      "Outages: times a loop's breaker opened from closed (failed probes not counted)."},
     [](const Store::Stats& s) { return s.breaker_opens.load(std::memory_order_relaxed); }},
    {{"sluice_redis_client_timeouts_total", Kind::kCounter,
      "Commands that got no reply within redis.timeout."},
     [](const Store::Stats& s) { return s.client_timeouts.load(std::memory_order_relaxed); }},
    {{"sluice_redis_client_reconnects_total", Kind::kCounter,
      "Connections to Redis established again after a loss."},
     [](const Store::Stats& s) { return s.client_reconnects.load(std::memory_order_relaxed); }},
    {{"sluice_redis_client_moved_total", Kind::kCounter, "Redis Cluster MOVED redirects followed."},
     [](const Store::Stats& s) { return s.client_moved.load(std::memory_order_relaxed); }},
    {{"sluice_redis_client_ask_total", Kind::kCounter,
      "Redis Cluster ASK redirects followed (a slot migrating)."},
     [](const Store::Stats& s) { return s.client_ask.load(std::memory_order_relaxed); }},
    {{"sluice_redis_client_script_loads_total", Kind::kCounter,
      "SCRIPT LOADs after NOSCRIPT (first use, a restart or flush)."},
     [](const Store::Stats& s) { return s.client_script_loads.load(std::memory_order_relaxed); }},
    {{"sluice_redis_client_refused_connects_total", Kind::kCounter,
      "Connection attempts Redis refused at AUTH (a wrong password or user), SELECT or ROLE "
      "(not a master)."},
     [](const Store::Stats& s) {
       return s.client_refused_connects.load(std::memory_order_relaxed);
     }},
    {{"sluice_redis_client_tls_failures_total", Kind::kCounter,
      "Connection attempts that failed at the TLS handshake or the certificate check."},
     [](const Store::Stats& s) { return s.client_tls_failures.load(std::memory_order_relaxed); }},
    {{"sluice_redis_sentinel_switches_total", Kind::kCounter,
      "Moves to another master named by the sentinels (failovers followed)."},
     [](const Store::Stats& s) {
       return s.client_master_switches.load(std::memory_order_relaxed);
     }},
    {{"sluice_redis_permit_renewals_total", Kind::kCounter,
      "Renewals of concurrency permits held in Redis for requests still running."},
     [](const Store::Stats& s) { return s.renewals.load(std::memory_order_relaxed); }},
    {{"sluice_redis_permit_renewals_lost_total", Kind::kCounter,
      "Renewals that found the permit gone: it expired first (Redis unreachable for a whole "
      "permit_ttl) or was reset; the request runs on without it."},
     [](const Store::Stats& s) { return s.renewals_lost.load(std::memory_order_relaxed); }},
    {{"sluice_redis_reconfigures_total", Kind::kCounter,
      "Redis clients replaced because a reload changed the redis settings."},
     [](const Store::Stats& s) { return s.reconfigures.load(std::memory_order_relaxed); }},
};
constexpr Family kConnectedLoops{"sluice_redis_connected_loops", Kind::kGauge,
                                 "Event loops whose Redis client has a live connection."};
constexpr Family kHeldPermits{"sluice_redis_held_permits", Kind::kGauge,
                              "Concurrency permits held in Redis for running gateway requests "
                              "(renewed until each request ends)."};

}  // namespace

void collect_store_metrics(metrics::Sink& sink, const Store& store) {
  const Store::Stats& stats = store.stats();
  for (int i = 0; i < kSources; ++i) {
    sink.add(kAnswers, {{"source", source_name(static_cast<Source>(i))}},
             static_cast<double>(stats.by_source[i].load(std::memory_order_relaxed)));
  }
  for (const Counter& c : kCounters) sink.add(c.family, {}, static_cast<double>(c.get(stats)));
  sink.add(kConnectedLoops, {}, stats.connected.load(std::memory_order_relaxed));
  sink.add(kHeldPermits, {}, static_cast<double>(stats.held.load(std::memory_order_relaxed)));
  const char* names[] = {"closed", "open", "half_open"};
  const int state = stats.breaker_state.load(std::memory_order_relaxed);
  for (int st = 0; st < 3; ++st)
    sink.add(kBreakerLoops, {{"state", names[st]}}, st == state ? 1 : 0);
}

}  // namespace sluice::backend::redis
