// write_store_metrics (sluice/backend/redis/store.hpp): the Redis backend's Prometheus text.
#include <string>
#include <vector>

#include "sluice/backend/redis/store.hpp"
#include "sluice/proto/http/prometheus_text.hpp"

namespace sluice::backend::redis {

void write_store_metrics(std::string& out, const std::vector<const Store*>& stores) {
  using proto::http::prometheus_family;
  using proto::http::prometheus_sample;
  if (stores.empty()) return;
  auto sum = [&](auto get) {
    std::uint64_t total = 0;
    for (const Store* s : stores) total += static_cast<std::uint64_t>(get(*s));
    return total;
  };
  prometheus_family(out, "sluice_redis_answers_total", "counter",
                    "Decisions on rules kept in Redis, by where the answer came from: redis, "
                    "lease (leased permits), fail_open, fail_closed, local (fallback limiter).");
  for (int i = 0; i < 5; ++i) {
    prometheus_sample(out, "sluice_redis_answers_total",
                      {{"source", source_name(static_cast<Source>(i))}}, sum([&](const Store& s) {
                        return s.stats().by_source[i].load(std::memory_order_relaxed);
                      }));
  }
  struct Counter {
    const char* name;
    const char* help;
    std::uint64_t (*get)(const Store&);
  };
  static constexpr Counter kCounters[] = {
      {"sluice_redis_scripts_total", "EVALSHA calls (each carries a batch of decisions).",
       [](const Store& s) { return s.stats().scripts.load(std::memory_order_relaxed); }},
      {"sluice_redis_scripted_requests_total", "Requests carried by those calls.",
       [](const Store& s) { return s.stats().scripted_requests.load(std::memory_order_relaxed); }},
      {"sluice_redis_lease_takes_total", "Round trips that took a batch of leased permits.",
       [](const Store& s) { return s.stats().takes.load(std::memory_order_relaxed); }},
      {"sluice_redis_failures_total", "Script calls that failed (error, timeout, connection).",
       [](const Store& s) { return s.stats().failures.load(std::memory_order_relaxed); }},
      {"sluice_redis_breaker_opens_total",
       "Outages: times a loop's breaker opened from closed (failed probes not counted).",
       [](const Store& s) { return s.stats().breaker_opens.load(std::memory_order_relaxed); }},
      {"sluice_redis_client_timeouts_total", "Commands that got no reply within redis.timeout.",
       [](const Store& s) { return s.stats().client_timeouts.load(std::memory_order_relaxed); }},
      {"sluice_redis_client_reconnects_total",
       "Connections to Redis established again after a loss.",
       [](const Store& s) { return s.stats().client_reconnects.load(std::memory_order_relaxed); }},
      {"sluice_redis_client_moved_total", "Redis Cluster MOVED redirects followed.",
       [](const Store& s) { return s.stats().client_moved.load(std::memory_order_relaxed); }},
      {"sluice_redis_client_ask_total", "Redis Cluster ASK redirects followed (a slot migrating).",
       [](const Store& s) { return s.stats().client_ask.load(std::memory_order_relaxed); }},
      {"sluice_redis_client_script_loads_total",
       "SCRIPT LOADs after NOSCRIPT (first use, a restart or flush).",
       [](const Store& s) {
         return s.stats().client_script_loads.load(std::memory_order_relaxed);
       }},
  };
  for (const auto& c : kCounters) {
    prometheus_family(out, c.name, "counter", c.help);
    prometheus_sample(out, c.name, {}, sum(c.get));
  }
  prometheus_family(out, "sluice_redis_breaker_loops", "gauge",
                    "Event loops whose breaker is in each state.");
  const char* names[] = {"closed", "open", "half_open"};
  for (int st = 0; st < 3; ++st) {
    prometheus_sample(
        out, "sluice_redis_breaker_loops", {{"state", names[st]}}, sum([&](const Store& s) {
          return s.stats().breaker_state.load(std::memory_order_relaxed) == st ? 1 : 0;
        }));
  }
}

}  // namespace sluice::backend::redis
