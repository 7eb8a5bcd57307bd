// Gateway metrics (gateway_metrics.hpp).
#include "gateway_metrics.hpp"

#include <fmt/format.h>

#include <vector>

#include "sluice/proto/http/prometheus_text.hpp"

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

struct Sum {
  std::array<std::uint64_t, kLatencyBounds.size() + 1> buckets{};
  std::uint64_t sum_ns = 0, count = 0, failures = 0;
};

}  // namespace

void write_gateway_metrics(std::string& out, std::span<const LoopStats* const> loops) {
  std::uint64_t open = 0;
  std::array<std::uint64_t, 6> responses{};
  std::map<std::string, Sum, std::less<>> upstreams;
  for (const LoopStats* l : loops) {
    open += l->open_connections.get();
    for (std::size_t i = 0; i < responses.size(); ++i) responses[i] += l->responses[i].get();
    l->for_each_upstream([&](const std::string& name, const UpstreamStats& u) {
      Sum& s = upstreams[name];
      for (std::size_t i = 0; i < s.buckets.size(); ++i) s.buckets[i] += u.buckets[i].get();
      s.sum_ns += u.sum_ns.get();
      s.count += u.count.get();
      s.failures += u.failures.get();
    });
  }

  out += "# HELP sluice_gateway_open_connections Client connections open on the gateway.\n";
  out += "# TYPE sluice_gateway_open_connections gauge\n";
  out += fmt::format("sluice_gateway_open_connections {}\n", open);
  out += "# HELP sluice_gateway_responses_total Responses the gateway sent, by status class.\n";
  out += "# TYPE sluice_gateway_responses_total counter\n";
  static constexpr const char* kClasses[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
  for (std::size_t i = 0; i < responses.size(); ++i) {
    out += fmt::format("sluice_gateway_responses_total{{code=\"{}\"}} {}\n", kClasses[i],
                       responses[i]);
  }

  out +=
      "# HELP sluice_upstream_latency_seconds Time from sending a request upstream to the end "
      "of its response.\n";
  out += "# TYPE sluice_upstream_latency_seconds histogram\n";
  for (const auto& [name, s] : upstreams) {
    const std::string up = proto::http::prometheus_label(name);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < s.buckets.size(); ++i) {
      cumulative += s.buckets[i];
      const std::string le =
          i < kLatencyBounds.size() ? fmt::format("{}", kLatencyBounds[i]) : "+Inf";
      out += fmt::format("sluice_upstream_latency_seconds_bucket{{upstream=\"{}\",le=\"{}\"}} {}\n",
                         up, le, cumulative);
    }
    out += fmt::format("sluice_upstream_latency_seconds_sum{{upstream=\"{}\"}} {:.9f}\n", up,
                       static_cast<double>(s.sum_ns) / 1e9);
    out +=
        fmt::format("sluice_upstream_latency_seconds_count{{upstream=\"{}\"}} {}\n", up, s.count);
  }
  out +=
      "# HELP sluice_upstream_failures_total Upstream attempts that failed: connect errors, "
      "timeouts, broken responses.\n";
  out += "# TYPE sluice_upstream_failures_total counter\n";
  for (const auto& [name, s] : upstreams) {
    out += fmt::format("sluice_upstream_failures_total{{upstream=\"{}\"}} {}\n",
                       proto::http::prometheus_label(name), s.failures);
  }
}

}  // namespace sluice::server::gateway
