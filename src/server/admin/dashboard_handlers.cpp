// The dashboard's endpoints (dashboard_handlers.hpp).
#include "dashboard_handlers.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <charconv>
#include <map>

#include "sluice/config/loader.hpp"
#include "sluice/config/rule_text_cache.hpp"
#include "sluice/control/config_store.hpp"
#include "sluice/proto/http/field_values.hpp"
#include "sluice/version.hpp"
#include "stats_sampler.hpp"
#include "ui_assets.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

constexpr std::pair<config::FailurePolicy, const char*> kPolicies[] = {
    {config::FailurePolicy::kOpen, "fail-open"},
    {config::FailurePolicy::kClosed, "fail-closed"},
    {config::FailurePolicy::kLocal, "local"}};

const char* policy_name(config::FailurePolicy p) {
  for (const auto& [policy, name] : kPolicies) {
    if (policy == p) return name;
  }
  return "?";
}

json::array points_of(const StatsHistory::Series& s, std::uint32_t StatsHistory::Point::*member) {
  json::array out;
  out.reserve(s.points.size());
  for (const auto& p : s.points) out.emplace_back(p.*member);
  return out;
}

}  // namespace

json::array listener_list(const config::RuleSet& rules) {
  const std::pair<const char*, const std::optional<config::Endpoint>*> rows[] = {
      {"gateway", &rules.listen},
      {"admin", &rules.admin},
      {"check", &rules.check},
      {"resp", rules.resp ? &rules.resp->listen : nullptr},
      {"grpc", rules.grpc ? &rules.grpc->listen : nullptr}};
  json::array out;
  for (const auto& [name, where] : rows) {
    if (where == nullptr || !*where) continue;
    out.push_back(json::object{{"name", name}, {"address", config::format_endpoint(**where)}});
  }
  return out;
}

namespace {

// The figures a family gives by its `rule` label.
using ByRule = std::map<std::string, json::object, std::less<>>;

using Samples = std::vector<metrics::Registry::Sample>;

// What /v1/status shows of the registry, in one collection (each part below picks its own).
Samples status_samples(const metrics::Registry& registry) {
  return registry.samples(
      {"sluice_limit_keys", "sluice_limit_capacity", "sluice_limit_memory_bytes",
       "sluice_limit_evictions_total", "sluice_limit_idle_drops_total",
       "sluice_redis_connected_loops", "sluice_redis_breaker_loops", "sluice_redis_failures_total",
       "sluice_redis_breaker_opens_total", "sluice_adaptive_limit", "sluice_adaptive_in_flight",
       "sluice_adaptive_queued", "sluice_adaptive_shed_total", "sluice_adaptive_min_rtt_seconds",
       "sluice_breaker_state", "sluice_breaker_transitions_total",
       "sluice_breaker_fallbacks_total"});
}

void table_figures(const Samples& samples, ByRule& rules) {
  static constexpr std::pair<std::string_view, const char*> kFigures[] = {
      {"sluice_limit_keys", "keys"},
      {"sluice_limit_capacity", "capacity"},
      {"sluice_limit_memory_bytes", "memory_bytes"},
      {"sluice_limit_evictions_total", "evictions"},
      {"sluice_limit_idle_drops_total", "idle_drops"}};
  for (const auto& s : samples) {
    if (!s.name.starts_with("sluice_limit_")) continue;
    for (const auto& [k, v] : s.labels) {
      if (k != "rule") continue;
      auto it = rules.find(v);
      if (it == rules.end()) continue;
      json::object& table = it->second["table"].is_object() ? it->second["table"].as_object()
                                                            : it->second["table"].emplace_object();
      for (const auto& [family, field] : kFigures) {
        if (family == s.name) table[field] = static_cast<std::uint64_t>(s.value);
      }
    }
  }
}

json::value redis_state(const config::RuleSet& rules, const Samples& samples) {
  if (!rules.redis || !rules.redis->configured()) return nullptr;
  json::object breaker{{"closed", 0}, {"open", 0}, {"half_open", 0}};
  double connected = 0, failures = 0, opens = 0;
  for (const auto& s : samples) {
    if (s.name == "sluice_redis_connected_loops") connected += s.value;
    if (s.name == "sluice_redis_failures_total") failures += s.value;
    if (s.name == "sluice_redis_breaker_opens_total") opens += s.value;
    if (s.name != "sluice_redis_breaker_loops") continue;
    for (const auto& [k, v] : s.labels) {
      if (k == "state") breaker[v] = static_cast<std::uint64_t>(s.value);
    }
  }
  return json::object{{"connected_loops", static_cast<std::uint64_t>(connected)},
                      {"breaker_loops", std::move(breaker)},
                      {"failures", static_cast<std::uint64_t>(failures)},
                      {"breaker_opens", static_cast<std::uint64_t>(opens)},
                      {"on_failure", policy_name(rules.redis->defaults.on_failure)}};
}

// Each route's overload protection as its gauges and counters show it: the adaptive limit
// (limit, in flight, queued, min RTT, shed over every tier) and the breaker (state, opens,
// fallbacks answered). Routes with neither are left out.
json::array overload_state(const Samples& samples) {
  static constexpr std::pair<std::string_view, const char*> kAdaptive[] = {
      {"sluice_adaptive_limit", "limit"},
      {"sluice_adaptive_in_flight", "in_flight"},
      {"sluice_adaptive_queued", "queued"},
      {"sluice_adaptive_shed_total", "shed"}};
  static constexpr const char* kBreakerStates[] = {"closed", "open", "half_open"};
  std::map<std::string, json::object, std::less<>> routes;
  for (const auto& s : samples) {
    const bool adaptive = s.name.starts_with("sluice_adaptive_");
    if (!adaptive && !s.name.starts_with("sluice_breaker_")) continue;
    std::string_view route, to;
    for (const auto& [k, v] : s.labels) {
      if (k == "route") route = v;
      if (k == "to") to = v;
    }
    if (route.empty()) continue;
    json::object& r = routes[std::string(route)];
    r["route"] = route;
    json::value& part = r[adaptive ? "adaptive" : "breaker"];
    if (!part.is_object()) {
      // Counters a series of which appears only with its first event start at 0.
      part =
          adaptive ? json::object{{"shed", 0.0}} : json::object{{"opens", 0.0}, {"fallbacks", 0.0}};
    }
    json::object& o = part.as_object();
    auto add = [&](const char* field, double v) {
      o[field] = (o.contains(field) ? o[field].to_number<double>() : 0.0) + v;
    };
    for (const auto& [family, field] : kAdaptive) {
      if (family == s.name) add(field, s.value);
    }
    if (s.name == "sluice_adaptive_min_rtt_seconds") o["min_rtt_ms"] = s.value * 1000;
    if (s.name == "sluice_breaker_state") {
      const auto i = static_cast<std::size_t>(s.value);
      o["state"] = i < std::size(kBreakerStates) ? kBreakerStates[i] : "unknown";
    }
    if (s.name == "sluice_breaker_transitions_total" && to == "open") add("opens", s.value);
    if (s.name == "sluice_breaker_fallbacks_total") add("fallbacks", s.value);
  }
  json::array out;
  for (auto& [name, o] : routes) out.push_back(std::move(o));
  return out;
}

std::string yaml_of(const std::optional<config::Rule>& rule) {
  if (!rule) return {};
  config::RuleTextCache cache;
  cache.update({*rule});
  return cache.text(0);
}

}  // namespace

Reply ui_file(std::string_view file) {
  if (file.empty()) file = "index.html";
  for (const UiAsset& a : ui_assets()) {
    if (a.name != file) continue;
    Reply reply = text_reply(200, std::string(a.data), std::string(a.content_type));
    // The page runs only its own scripts, and no other site may frame it (clickjacking).
    reply.headers.emplace_back("Content-Security-Policy",
                               "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
    reply.headers.emplace_back("Cache-Control", "no-cache");
    return reply;
  }
  return error_reply(404, "no such dashboard file: " + std::string(file), "path");
}

Reply stats_series(const StatsSampler& sampler, std::string_view query) {
  std::int64_t since = 0;
  if (auto text = proto::http::query_param(query, "since")) {
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), since);
    if (ec != std::errc{} || end != text->data() + text->size() || since < 0) {
      return error_reply(
          400, "since must be a unix time in whole seconds, not '" + std::string(*text) + "'",
          "since");
    }
  }
  const StatsHistory::Window w = sampler.since(since);
  json::array series;
  for (const auto& s : w.series) {
    series.push_back(
        json::object{{"kind", s.kind == SeriesKind::kRule ? "rule" : "route"},
                     {"name", s.name},
                     {"allowed", points_of(s, &StatsHistory::Point::allowed)},
                     {"denied", points_of(s, &StatsHistory::Point::denied)},
                     {"delayed", points_of(s, &StatsHistory::Point::delayed)},
                     {"dry_run_denied", points_of(s, &StatsHistory::Point::dry_run_denied)}});
  }
  json::object body{{"first", w.first},
                    {"last", w.last},
                    {"resolution_seconds", 1},
                    {"capacity_points", StatsHistory::kPoints},
                    {"memory_bytes", sampler.memory_bytes()},
                    {"max_memory_bytes", StatsHistory::kMaxBytes},
                    {"series", std::move(series)}};
  return json_reply(200, body);
}

Reply status(const control::ConfigStore& store, const metrics::Registry& registry,
             const StatsSampler* sampler) {
  const auto rules = store.rules();
  ByRule by_rule;
  for (const auto& r : rules->rules) {
    const bool redis = rules->storage_of(r) == config::Storage::kRedis;
    json::object o{{"name", r.name}, {"storage", redis ? "redis" : "local"}};
    if (redis) o["on_failure"] = policy_name(rules->redis_options_of(r).on_failure);
    by_rule.emplace(r.name, std::move(o));
  }
  const Samples samples = status_samples(registry);
  table_figures(samples, by_rule);
  json::array rule_rows;
  for (const auto& r : rules->rules) rule_rows.push_back(std::move(by_rule[r.name]));
  json::object body{
      {"version", sluice::version()},
      {"commit", sluice::git_commit()},
      {"config", json::object{{"version", store.engine().version()},
                              {"file", store.path()},
                              {"write_back", rules->write_back && !store.path().empty()}}},
      {"listeners", listener_list(*rules)},
      {"redis", redis_state(*rules, samples)},
      {"rules", std::move(rule_rows)},
      {"overload", overload_state(samples)}};
  if (sampler != nullptr) body["series_memory_bytes"] = sampler->memory_bytes();
  return json_reply(200, body);
}

void LastChange::record(const std::string& rule, const std::optional<config::Rule>& before,
                        const std::optional<config::Rule>& after, std::int64_t unix_second) {
  std::string b = yaml_of(before), a = yaml_of(after);
  std::lock_guard lock(mutex_);
  rule_ = rule;
  before_ = std::move(b);
  after_ = std::move(a);
  at_ = unix_second;
}

Reply LastChange::reply() const {
  std::lock_guard lock(mutex_);
  if (rule_.empty()) return json_reply(200, json::object{{"rule", nullptr}});
  return json_reply(
      200, json::object{{"rule", rule_}, {"before", before_}, {"after", after_}, {"at", at_}});
}

}  // namespace sluice::server
