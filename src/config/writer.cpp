// Writing a RuleSet back out (config_loader.hpp): YAML for write-back, which loads again to an
// equal set, and a rule as JSON for the admin API, which parse_rule reads back.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "breaker_yaml.hpp"
#include "internal.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/config/rule_json.hpp"
#include "sluice/config/rule_text_cache.hpp"
#include "sluice/core/byte_size.hpp"
#include "sluice/core/rate.hpp"
#include "sluice/core/time.hpp"

namespace sluice::config {

using internal::format_key_part;
using internal::kAccessLogFormats;
using internal::kActions;
using internal::kCombines;
using internal::kEscapedSlashes;
using internal::kFailurePolicies;
using internal::kLogKeys;
using internal::kOnChanges;
using internal::kOnMissingKey;
using internal::kRateLimitDrafts;
using internal::kStorages;
using internal::name_of;

namespace {

void emit_list(YAML::Emitter& out, const char* key, const std::vector<std::string>& items) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& i : items) out << i;
  out << YAML::EndSeq;
}

std::string format_share(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The Redis fields a rule (or the redis section) sets, as name/text pairs, in a fixed order.
std::vector<std::pair<const char*, std::string>> redis_fields(
    const std::optional<FailurePolicy>& on_failure, const std::optional<double>& local_share,
    const std::optional<std::int64_t>& lease, const std::optional<core::Nanos>& lease_ttl) {
  std::vector<std::pair<const char*, std::string>> out;
  if (on_failure) out.emplace_back("on_failure", name_of(kFailurePolicies, *on_failure));
  if (local_share) out.emplace_back("local_share", format_share(*local_share));
  if (lease) out.emplace_back("lease", std::to_string(*lease));
  if (lease_ttl) out.emplace_back("lease_ttl", core::format_duration(*lease_ttl));
  return out;
}

std::vector<std::pair<const char*, std::string>> rule_redis_fields(const Rule& r) {
  auto out = redis_fields(r.on_failure, r.local_share, r.lease, r.lease_ttl);
  if (r.storage) out.insert(out.begin(), {"storage", std::string(name_of(kStorages, *r.storage))});
  return out;
}

using Limits = std::vector<std::pair<std::string, std::string>>;

// A rule's tiers (`default` among them) or overrides as (name, limit text) pairs.
Limits limits_of(const std::vector<LimitVariant>& variants) {
  Limits out;
  for (const LimitVariant& v : variants) out.emplace_back(v.name, v.limit_text);
  return out;
}

void emit_limits(YAML::Emitter& out, const char* key, const Limits& limits) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [name, text] : limits) out << YAML::Key << name << YAML::Value << text;
  out << YAML::EndMap;
}

boost::json::object limits_json(const Limits& limits) {
  boost::json::object o;
  for (const auto& [name, text] : limits) o[name] = text;
  return o;
}

void emit_descriptors(YAML::Emitter& out, const std::vector<RlsDescriptor>& descriptors) {
  out << YAML::BeginSeq;
  for (const RlsDescriptor& d : descriptors) {
    out << YAML::BeginMap << YAML::Key << "key" << YAML::Value << d.key;
    if (!d.value.empty()) out << YAML::Key << "value" << YAML::Value << d.value;
    if (d.rate_limit) {
      const RlsRateLimit& r = *d.rate_limit;
      out << YAML::Key << "rate_limit" << YAML::Value << YAML::BeginMap;
      if (r.unlimited) {
        out << YAML::Key << "unlimited" << YAML::Value << true;
      } else {
        out << YAML::Key << "unit" << YAML::Value << std::string(unit_name(r.unit));
        out << YAML::Key << "requests_per_unit" << YAML::Value << r.requests_per_unit;
        if (!r.algorithm.empty()) out << YAML::Key << "algorithm" << YAML::Value << r.algorithm;
      }
      if (!r.name.empty()) out << YAML::Key << "name" << YAML::Value << r.name;
      out << YAML::EndMap;
    }
    if (d.shadow_mode) out << YAML::Key << "shadow_mode" << YAML::Value << true;
    if (!d.descriptors.empty()) {
      out << YAML::Key << "descriptors" << YAML::Value;
      emit_descriptors(out, d.descriptors);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// The `rls:` section: its settings, the files it names and its own domains (not those the
// files hold, which stay in their files).
void emit_rls(YAML::Emitter& out, const RlsSettings& rls) {
  out << YAML::Key << "rls" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "storage" << YAML::Value << std::string(name_of(kStorages, rls.storage));
  for (const auto& [field, value] :
       redis_fields(rls.on_failure, rls.local_share, rls.lease, rls.lease_ttl)) {
    out << YAML::Key << field << YAML::Value << value;
  }
  out << YAML::Key << "memory" << YAML::Value << core::format_bytes(rls.memory);
  out << YAML::Key << "max_descriptors" << YAML::Value << rls.max_descriptors;
  out << YAML::Key << "max_concurrent_streams" << YAML::Value << rls.max_concurrent_streams;
  if (!rls.files.empty()) emit_list(out, "files", rls.files);
  out << YAML::Key << "domains" << YAML::Value << YAML::BeginSeq;
  for (const RlsDomain& d : rls.domains) {
    if (!d.file.empty()) continue;
    out << YAML::BeginMap << YAML::Key << "domain" << YAML::Value << d.name;
    out << YAML::Key << "descriptors" << YAML::Value;
    emit_descriptors(out, d.descriptors);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
}

void emit_rule(YAML::Emitter& out, const Rule& r) {
  out << YAML::Key << r.name << YAML::Value << YAML::BeginMap;
  if (r.tier) {
    out << YAML::Key << "tier" << YAML::Value << format_key_part(*r.tier);
    emit_limits(out, "tiers", limits_of(r.tiers));
  } else {
    out << YAML::Key << "limit" << YAML::Value << r.limit_text;
  }
  if (!r.overrides.empty()) emit_limits(out, "overrides", limits_of(r.overrides));
  if (r.on_change != OnChange::kKeep) {
    out << YAML::Key << "on_change" << YAML::Value << std::string(name_of(kOnChanges, r.on_change));
  }
  std::vector<std::string> key;
  for (const auto& part : r.key) key.push_back(format_key_part(part));
  if (key.size() == 1) {
    out << YAML::Key << "key" << YAML::Value << key.front();
  } else {
    emit_list(out, "key", key);
  }
  out << YAML::Key << "action" << YAML::Value << std::string(name_of(kActions, r.action));
  if (r.action == Action::kDelay) {
    out << YAML::Key << "max_wait" << YAML::Value << core::format_duration(r.max_wait);
  }
  out << YAML::Key << "status" << YAML::Value << r.status;
  out << YAML::Key << "body" << YAML::Value << YAML::DoubleQuoted << r.body;
  out << YAML::Key << "on_missing_key" << YAML::Value
      << std::string(name_of(kOnMissingKey, r.on_missing_key));
  if (r.on_missing_key == OnMissingKey::kDeny) {
    out << YAML::Key << "missing_key_status" << YAML::Value << r.missing_key_status;
  }
  if (r.log_key != LogKey::kRaw) {
    out << YAML::Key << "log_key" << YAML::Value << std::string(name_of(kLogKeys, r.log_key));
  }
  if (r.limit.wait == spec::WaitSupport::kNotTimeBased) {
    out << YAML::Key << "permit_ttl" << YAML::Value << core::format_duration(r.permit_ttl);
    out << YAML::Key << "max_permits" << YAML::Value << r.max_permits;
  }
  if (r.count_denied) out << YAML::Key << "count_denied" << YAML::Value << true;
  if (!r.cost_from.empty()) {
    out << YAML::Key << "cost_from" << YAML::Value << "response_header:" + r.cost_from;
  }
  if (r.reserve) out << YAML::Key << "reserve" << YAML::Value << *r.reserve;
  if (!r.count_if_status.empty()) {
    out << YAML::Key << "count_if" << YAML::Value << YAML::BeginMap << YAML::Key << "status"
        << YAML::Value << YAML::Flow << r.count_if_status << YAML::EndMap;
  }
  if (r.block) {
    out << YAML::Key << "on_deny" << YAML::Value << YAML::BeginMap << YAML::Key << "block"
        << YAML::Value << core::format_duration(*r.block) << YAML::EndMap;
  }
  for (const auto& [field, value] : rule_redis_fields(r)) {
    out << YAML::Key << field << YAML::Value << value;
  }
  out << YAML::EndMap;
}

void emit_adaptive(YAML::Emitter& out, const AdaptiveConcurrency& a) {
  out << YAML::Key << "adaptive_concurrency" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "algorithm" << YAML::Value
      << std::string(name_of(internal::kAdaptiveAlgorithms, a.algorithm));
  for (auto [field, value] :
       {std::pair{"min_limit", &a.min_limit}, std::pair{"max_limit", &a.max_limit},
        std::pair{"initial", &a.initial}}) {
    if (*value) out << YAML::Key << field << YAML::Value << **value;
  }
  if (a.min_rtt_interval) {
    out << YAML::Key << "min_rtt_interval" << YAML::Value
        << core::format_duration(*a.min_rtt_interval);
  }
  if (a.max_wait > 0)
    out << YAML::Key << "max_wait" << YAML::Value << core::format_duration(a.max_wait);
  out << YAML::Key << "max_queue" << YAML::Value << a.max_queue;
  out << YAML::Key << "status" << YAML::Value << a.status;
  out << YAML::Key << "body" << YAML::Value << YAML::DoubleQuoted << a.body;
  out << YAML::Key << "priority" << YAML::Value
      << (a.priority_header.empty() ? std::to_string(a.priority) : "header:" + a.priority_header);
  if (!a.bypass.empty()) {
    std::vector<std::string> texts;
    for (const auto& c : a.bypass) texts.push_back(c.text);
    emit_list(out, "bypass", texts);
  }
  out << YAML::EndMap;
}

void emit_route(YAML::Emitter& out, const Route& r) {
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << r.name;
  const RouteMatch& m = r.match;
  if (!m.host.empty() || !m.path_prefix.empty() || !m.path_exact.empty() || !m.methods.empty()) {
    out << YAML::Key << "match" << YAML::Value << YAML::BeginMap;
    for (auto [field, value] :
         {std::pair{"host", &m.host}, std::pair{"path_prefix", &m.path_prefix},
          std::pair{"path_exact", &m.path_exact}}) {
      if (!value->empty()) out << YAML::Key << field << YAML::Value << *value;
    }
    if (!m.methods.empty()) emit_list(out, "methods", m.methods);
    out << YAML::EndMap;
  }
  if (r.respond_status) {
    out << YAML::Key << "respond" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "status" << YAML::Value << *r.respond_status;
    out << YAML::Key << "body" << YAML::Value << YAML::DoubleQuoted << r.respond_body;
    out << YAML::EndMap;
  } else {
    out << YAML::Key << "upstream" << YAML::Value << r.upstream;
  }
  emit_list(out, "rules", r.rules);
  out << YAML::Key << "combine" << YAML::Value << std::string(name_of(kCombines, r.combine));
  if (!r.request_buffering) out << YAML::Key << "request_buffering" << YAML::Value << "off";
  if (r.breaker) internal::emit_breaker(out, *r.breaker);
  if (r.adaptive) emit_adaptive(out, *r.adaptive);
  out << YAML::EndMap;
}

void emit_admin_access(YAML::Emitter& out, const RuleSet& rs) {
  if (rs.check) out << YAML::Key << "check" << YAML::Value << format_endpoint(*rs.check);
  out << YAML::Key << "check_on_admin" << YAML::Value << rs.check_on_admin;
  const AdminAuth& a = rs.admin_auth;
  if (!a.token_file.empty() || !a.token_env.empty() || a.insecure) {
    out << YAML::Key << "admin_auth" << YAML::Value << YAML::BeginMap;
    if (!a.token_file.empty()) {
      out << YAML::Key << "token_file" << YAML::Value << YAML::DoubleQuoted << a.token_file;
    }
    if (!a.token_env.empty()) out << YAML::Key << "token_env" << YAML::Value << a.token_env;
    out << YAML::Key << "insecure" << YAML::Value << a.insecure;
    out << YAML::EndMap;
  }
  if (!rs.admin_hosts.empty()) emit_list(out, "admin_hosts", rs.admin_hosts);
}

// timeouts:, headers: and http: (bodies and escaped slashes).
void emit_http_settings(YAML::Emitter& out, const RuleSet& rs) {
  out << YAML::Key << "timeouts" << YAML::Value << YAML::BeginMap;
  for (auto [field, value] :
       {std::pair{"connect", rs.timeouts.connect}, std::pair{"header", rs.timeouts.header},
        std::pair{"idle", rs.timeouts.idle}, std::pair{"upstream", rs.timeouts.upstream},
        std::pair{"body", rs.timeouts.body}}) {
    out << YAML::Key << field << YAML::Value << core::format_duration(value);
  }
  out << YAML::EndMap;
  out << YAML::Key << "headers" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "ratelimit" << YAML::Value << rs.ratelimit_headers;
  out << YAML::Key << "legacy" << YAML::Value << rs.legacy_headers;
  out << YAML::Key << "draft" << YAML::Value
      << std::string(name_of(kRateLimitDrafts, rs.ratelimit_draft));
  out << YAML::EndMap;
  out << YAML::Key << "http" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "escaped_slashes" << YAML::Value
      << std::string(name_of(kEscapedSlashes, rs.escaped_slashes));
  out << YAML::Key << "body_buffer" << YAML::Value << core::format_bytes(rs.bodies.buffer);
  out << YAML::Key << "max_buffered_body" << YAML::Value
      << core::format_bytes(rs.bodies.max_buffered);
  if (!rs.bodies.temp_dir.empty()) {
    out << YAML::Key << "body_temp_dir" << YAML::Value << YAML::DoubleQuoted << rs.bodies.temp_dir;
  }
  out << YAML::Key << "max_body_size" << YAML::Value << core::format_bytes(rs.bodies.max_size);
  out << YAML::Key << "min_body_rate" << YAML::Value
      << core::format_bytes(rs.bodies.min_rate) + "/s";
  out << YAML::EndMap;
}

// A user and where its password is read (never the password).
void emit_auth(YAML::Emitter& out, const RedisSecret& a, const std::string& prefix) {
  if (!a.user.empty()) out << YAML::Key << prefix + "user" << YAML::Value << a.user;
  if (!a.password_file.empty()) {
    out << YAML::Key << prefix + "password_file" << YAML::Value << YAML::DoubleQuoted
        << a.password_file;
  }
  if (!a.password_env.empty()) {
    out << YAML::Key << prefix + "password_env" << YAML::Value << a.password_env;
  }
}

void emit_redis_tls(YAML::Emitter& out, const RedisTls& t) {
  out << YAML::Key << "tls" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "verify" << YAML::Value << (t.verify ? "true" : "false");
  for (const auto& [field, value] :
       {std::pair{"ca_file", &t.ca_file}, std::pair{"ca_dir", &t.ca_dir},
        std::pair{"cert_file", &t.cert_file}, std::pair{"key_file", &t.key_file},
        std::pair{"server_name", &t.server_name}}) {
    if (!value->empty()) out << YAML::Key << field << YAML::Value << YAML::DoubleQuoted << *value;
  }
  out << YAML::EndMap;
}

void emit_redis(YAML::Emitter& out, const RedisSettings& r) {
  out << YAML::Key << "redis" << YAML::Value << YAML::BeginMap;
  if (!r.url.empty()) out << YAML::Key << "url" << YAML::Value << r.url;
  if (!r.sentinels.empty()) {
    std::vector<std::string> sentinels;
    for (const auto& e : r.sentinels) sentinels.push_back(format_endpoint(e));
    emit_list(out, "sentinels", sentinels);
    out << YAML::Key << "master" << YAML::Value << r.master;
  }
  if (r.db) out << YAML::Key << "db" << YAML::Value << *r.db;
  emit_auth(out, r.auth, "");
  emit_auth(out, r.sentinel_auth, "sentinel_");
  if (r.tls) emit_redis_tls(out, *r.tls);
  out << YAML::Key << "timeout" << YAML::Value << core::format_duration(r.timeout);
  out << YAML::Key << "cache_denials" << YAML::Value << core::format_duration(r.cache_denials);
  out << YAML::Key << "storage" << YAML::Value
      << std::string(name_of(kStorages, r.default_storage));
  const RedisRuleOptions& d = r.defaults;
  for (const auto& [field, value] :
       redis_fields(d.on_failure, d.local_share, d.lease, d.lease_ttl)) {
    out << YAML::Key << field << YAML::Value << value;
  }
  out << YAML::EndMap;
}

void emit_resp(YAML::Emitter& out, const RespSettings& r) {
  out << YAML::Key << "resp" << YAML::Value << YAML::BeginMap;
  if (r.listen) out << YAML::Key << "listen" << YAML::Value << format_endpoint(*r.listen);
  out << YAML::Key << "storage" << YAML::Value << std::string(name_of(kStorages, r.storage));
  if (r.on_failure) {
    out << YAML::Key << "on_failure" << YAML::Value
        << std::string(name_of(kFailurePolicies, *r.on_failure));
  }
  if (r.local_share) out << YAML::Key << "local_share" << YAML::Value << *r.local_share;
  out << YAML::Key << "memory" << YAML::Value << core::format_bytes(r.memory);
  out << YAML::Key << "max_clients" << YAML::Value << r.max_clients;
  if (!r.password_file.empty() || !r.password_env.empty()) {
    out << YAML::Key << "user" << YAML::Value << r.user;
    out << YAML::Key << (r.password_file.empty() ? "password_env" : "password_file") << YAML::Value
        << (r.password_file.empty() ? r.password_env : r.password_file);
  }
  out << YAML::Key << "max_auth_failures" << YAML::Value << r.max_auth_failures;
  out << YAML::Key << "auth_failure_burst" << YAML::Value << r.auth_failure_burst;
  out << YAML::Key << "auth_failure_rate" << YAML::Value << core::format_rate(r.auth_failure_rate);
  out << YAML::Key << "max_queued_commands" << YAML::Value << r.max_queued_commands;
  out << YAML::Key << "max_queued_bytes" << YAML::Value << core::format_bytes(r.max_queued_bytes);
  out << YAML::EndMap;
}

void emit_upstreams(YAML::Emitter& out, const std::vector<Upstream>& upstreams) {
  out << YAML::Key << "upstreams" << YAML::Value << YAML::BeginMap;
  for (const auto& u : upstreams) {
    out << YAML::Key << u.name << YAML::Value << YAML::BeginMap;
    std::vector<std::string> servers;
    for (const auto& s : u.servers) servers.push_back(format_endpoint(s));
    emit_list(out, "servers", servers);
    out << YAML::Key << "max_fails" << YAML::Value << u.max_fails;
    out << YAML::Key << "fail_timeout" << YAML::Value << core::format_duration(u.fail_timeout);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

}  // namespace

namespace {

// Everything but `rules:`, which is last: the caller appends it.
std::string yaml_before_rules(const RuleSet& rs) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (rs.listen) out << YAML::Key << "listen" << YAML::Value << format_endpoint(*rs.listen);
  out << YAML::Key << "admin" << YAML::Value << (rs.admin ? format_endpoint(*rs.admin) : "off");
  emit_admin_access(out, rs);
  out << YAML::Key << "workers" << YAML::Value << rs.workers;
  if (!rs.trusted_proxies.empty()) {
    std::vector<std::string> texts;
    for (const auto& c : rs.trusted_proxies) texts.push_back(c.text);
    emit_list(out, "trusted_proxies", texts);
  }
  out << YAML::Key << "memory" << YAML::Value << core::format_bytes(rs.memory);
  emit_http_settings(out, rs);
  if (!rs.access_log.empty() && rs.access_log_format == AccessLogFormat::kText) {
    out << YAML::Key << "access_log" << YAML::Value << YAML::DoubleQuoted << rs.access_log;
  } else if (!rs.access_log.empty()) {
    out << YAML::Key << "access_log" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "path" << YAML::Value << YAML::DoubleQuoted << rs.access_log;
    out << YAML::Key << "format" << YAML::Value
        << std::string(name_of(kAccessLogFormats, rs.access_log_format));
    out << YAML::EndMap;
  }
  out << YAML::Key << "write_back" << YAML::Value << rs.write_back;
  if (rs.redis) emit_redis(out, *rs.redis);
  if (rs.resp) emit_resp(out, *rs.resp);
  if (rs.rls) emit_rls(out, *rs.rls);
  if (rs.grpc) {
    out << YAML::Key << "grpc" << YAML::Value << YAML::BeginMap;
    if (rs.grpc->listen) {
      out << YAML::Key << "listen" << YAML::Value << format_endpoint(*rs.grpc->listen);
    }
    out << YAML::EndMap;
  }
  internal::emit_stale_cache(out, rs.stale_cache);
  emit_upstreams(out, rs.upstreams);
  out << YAML::Key << "routes" << YAML::Value << YAML::BeginSeq;
  for (const auto& r : rs.routes) emit_route(out, r);
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

// One rule as a block of its own ("NAME:\n  limit: ...\n").
std::string rule_yaml(const Rule& r) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_rule(out, r);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

// `rules:` with each rule's block indented under it, as the emitter nests a block map.
template <class TextOf>
std::string with_rules(std::string text, const std::vector<Rule>& rules, TextOf&& text_of) {
  if (rules.empty()) return text + "rules: {}\n";
  text += "rules:\n";
  for (const Rule& r : rules) {
    const std::string& block = text_of(r);
    for (std::size_t at = 0; at < block.size();) {
      const std::size_t end = std::min(block.find('\n', at), block.size() - 1);
      text += "  ";
      text.append(block, at, end - at + 1);
      if (block[end] != '\n') text += '\n';
      at = end + 1;
    }
  }
  return text;
}

}  // namespace

std::string to_yaml(const RuleSet& rs) {
  std::string scratch;
  return with_rules(yaml_before_rules(rs), rs.rules,
                    [&](const Rule& r) -> const std::string& { return scratch = rule_yaml(r); });
}

std::string to_yaml(const RuleSet& rs, RuleTextCache& cache) {
  cache.update(rs.rules);
  std::size_t i = 0;
  return with_rules(yaml_before_rules(rs), rs.rules,
                    [&](const Rule&) -> const std::string& { return cache.text(i++); });
}

void RuleTextCache::update(const std::vector<Rule>& rules) {
  std::vector<Entry> next;
  next.reserve(rules.size());
  std::unordered_map<std::string_view, std::size_t> moved;  // built at the first rule that moved
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const Rule& rule = rules[i];
    Entry* was = nullptr;
    if (i < entries_.size() && entries_[i].rule.name == rule.name) {
      was = &entries_[i];
    } else {
      if (moved.empty()) {
        for (std::size_t j = 0; j < entries_.size(); ++j) moved.emplace(entries_[j].rule.name, j);
      }
      if (auto it = moved.find(rule.name); it != moved.end()) was = &entries_[it->second];
    }
    if (was != nullptr && !was->yaml.empty() && was->rule == rule) {
      next.push_back(std::move(*was));
      was->yaml.clear();  // taken (a name given twice is made again)
    } else {
      next.push_back(Entry{rule, rule_yaml(rule)});
    }
  }
  entries_ = std::move(next);
}

boost::json::object rule_json(const Rule& r) {
  boost::json::object o;
  o["name"] = r.name;
  if (r.tier) {
    o["tier"] = format_key_part(*r.tier);
    o["tiers"] = limits_json(limits_of(r.tiers));
  } else {
    o["limit"] = r.limit_text;
  }
  if (!r.overrides.empty()) o["overrides"] = limits_json(limits_of(r.overrides));
  if (r.on_change != OnChange::kKeep) o["on_change"] = name_of(kOnChanges, r.on_change);
  boost::json::array key;
  for (const auto& part : r.key) key.emplace_back(format_key_part(part));
  o["key"] = std::move(key);
  o["action"] = name_of(kActions, r.action);
  if (r.action == Action::kDelay) o["max_wait"] = core::format_duration(r.max_wait);
  o["status"] = r.status;
  o["body"] = r.body;
  o["on_missing_key"] = name_of(kOnMissingKey, r.on_missing_key);
  if (r.on_missing_key == OnMissingKey::kDeny) o["missing_key_status"] = r.missing_key_status;
  if (r.log_key != LogKey::kRaw) o["log_key"] = name_of(kLogKeys, r.log_key);
  if (r.limit.wait == spec::WaitSupport::kNotTimeBased) {
    o["permit_ttl"] = core::format_duration(r.permit_ttl);
    o["max_permits"] = r.max_permits;
  }
  if (r.count_denied) o["count_denied"] = true;
  if (!r.cost_from.empty()) o["cost_from"] = "response_header:" + r.cost_from;
  if (r.reserve) o["reserve"] = *r.reserve;
  if (!r.count_if_status.empty()) {
    boost::json::array statuses;
    for (const auto& st : r.count_if_status) {
      const bool number = st.find_first_not_of("0123456789") == std::string::npos;
      if (number) {
        statuses.emplace_back(std::stoi(st));
      } else {
        statuses.emplace_back(st);
      }
    }
    o["count_if"] = boost::json::object{{"status", std::move(statuses)}};
  }
  if (r.block) o["on_deny"] = boost::json::object{{"block", core::format_duration(*r.block)}};
  for (const auto& [field, value] : rule_redis_fields(r)) o[field] = value;
  return o;
}

std::string rule_to_json(const Rule& r) { return boost::json::serialize(rule_json(r)); }

}  // namespace sluice::config
