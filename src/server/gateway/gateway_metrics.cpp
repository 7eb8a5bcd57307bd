// Gateway metrics (gateway_metrics.hpp).
#include "gateway_metrics.hpp"

#include <fmt/format.h>

#include <vector>

namespace sluice::server::gateway {

void UpstreamStats::observe(core::Nanos latency) {
  const double s = static_cast<double>(latency) / static_cast<double>(core::kNanosPerSecond);
  std::size_t i = 0;
  while (i < kLatencyBounds.size() && s > kLatencyBounds[i]) ++i;
  buckets[i].add();
  sum_ns.add(latency);
  count.add();
}

UpstreamStats& LoopStats::upstream(std::string_view name) {
  auto it = upstreams_.find(name);
  if (it != upstreams_.end()) return *it->second;
  std::lock_guard lock(mu_);
  return *upstreams_.emplace(std::string(name), std::make_unique<UpstreamStats>()).first->second;
}

namespace {

using metrics::Family;
using metrics::Kind;

constexpr Family kOpen{"sluice_gateway_open_connections", Kind::kGauge,
                       "Client connections open on the gateway."};
constexpr Family kResponses{"sluice_gateway_responses_total", Kind::kCounter,
                            "Responses the gateway sent, by status class."};
constexpr Family kAborts{"sluice_gateway_client_aborts_total", Kind::kCounter,
                         "Requests whose client left while they waited on an upstream; the "
                         "upstream connection was closed."};
constexpr Family kLatency{"sluice_upstream_latency_seconds", Kind::kHistogram,
                          "Time from sending a request upstream to the end of its response."};
constexpr Family kFailures{"sluice_upstream_failures_total", Kind::kCounter,
                           "Upstream attempts that failed: connect errors, timeouts, broken "
                           "responses."};

}  // namespace

void collect_gateway_metrics(metrics::Sink& sink, const LoopStats& l) {
  sink.add(kOpen, {}, static_cast<double>(static_cast<std::int64_t>(l.open_connections.get())));
  static constexpr const char* kClasses[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
  for (std::size_t i = 0; i < l.responses.size(); ++i) {
    sink.add(kResponses, {{"code", kClasses[i]}}, static_cast<double>(l.responses[i].get()));
  }
  sink.add(kAborts, {}, static_cast<double>(l.client_aborts.get()));
  sink.declare(kLatency);
  l.for_each_upstream([&](const std::string& name, const UpstreamStats& u) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < u.buckets.size(); ++i) {
      cumulative += u.buckets[i].get();
      const std::string le =
          i < kLatencyBounds.size() ? fmt::format("{}", kLatencyBounds[i]) : "+Inf";
      sink.add(kLatency, "_bucket", {{"upstream", name}, {"le", le}},
               static_cast<double>(cumulative));
    }
    sink.add(kLatency, "_sum", {{"upstream", name}}, static_cast<double>(u.sum_ns.get()) / 1e9);
    sink.add(kLatency, "_count", {{"upstream", name}}, static_cast<double>(u.count.get()));
  });
  sink.declare(kFailures);
  l.for_each_upstream([&](const std::string& name, const UpstreamStats& u) {
    sink.add(kFailures, {{"upstream", name}}, static_cast<double>(u.failures.get()));
  });
}

}  // namespace sluice::server::gateway
