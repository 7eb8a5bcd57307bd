// Lookups of RuleSet (sluice/config/rule_set.hpp). A set holds tens of entries, read at reload
// and by the admin API, so a linear search beats building an index.
#include "sluice/config/rule_set.hpp"

#include <algorithm>

namespace sluice::config {
namespace {

template <class T>
const T* find_named(const std::vector<T>& entries, std::string_view name) {
  auto it =
      std::find_if(entries.begin(), entries.end(), [&](const T& e) { return e.name == name; });
  return it == entries.end() ? nullptr : &*it;
}

}  // namespace

const Rule* RuleSet::rule(std::string_view name) const { return find_named(rules, name); }

const Upstream* RuleSet::upstream(std::string_view name) const {
  return find_named(upstreams, name);
}

RedisRuleOptions RuleSet::rls_redis_options() const {
  RedisRuleOptions o = redis ? redis->defaults : RedisRuleOptions{};
  if (!rls) return o;
  if (rls->on_failure) o.on_failure = *rls->on_failure;
  if (rls->local_share) o.local_share = *rls->local_share;
  if (rls->lease) o.lease = *rls->lease;
  if (rls->lease_ttl) o.lease_ttl = *rls->lease_ttl;
  return o;
}

RedisRuleOptions RuleSet::resp_redis_options() const {
  RedisRuleOptions o = redis ? redis->defaults : RedisRuleOptions{};
  if (!resp) return o;
  if (resp->on_failure) o.on_failure = *resp->on_failure;
  if (resp->local_share) o.local_share = *resp->local_share;
  o.lease = 0;  // CL.THROTTLE answers each call exactly, as redis-cell does
  return o;
}

}  // namespace sluice::config

namespace sluice::config {

Storage RuleSet::storage_of(const Rule& rule) const {
  if (rule.storage) return *rule.storage;
  return redis ? redis->default_storage : Storage::kLocal;
}

RedisRuleOptions RuleSet::redis_options_of(const Rule& rule) const {
  RedisRuleOptions o = redis ? redis->defaults : RedisRuleOptions{};
  if (rule.on_failure) o.on_failure = *rule.on_failure;
  if (rule.local_share) o.local_share = *rule.local_share;
  if (rule.lease) o.lease = *rule.lease;
  if (rule.lease_ttl) o.lease_ttl = *rule.lease_ttl;
  return o;
}

}  // namespace sluice::config

namespace sluice::config {

core::Expected<proto::resp::StoreUrl> RedisSettings::store_url() const {
  proto::resp::StoreUrl out;
  if (!url.empty()) {
    auto parsed = proto::resp::parse_store_url(url);
    if (!parsed) return parsed;
    out = std::move(parsed).value();
  } else if (!sentinels.empty()) {
    out.sentinel = true;
    out.seeds = sentinels;
    out.master = master;
  } else {
    return core::make_error("no Redis is named: give redis.url, or redis.sentinels and master");
  }
  if (db) out.db = *db;
  if (!auth.user.empty()) out.auth.user = auth.user;
  out.auth.password = auth.password;
  out.sentinel_auth.user = sentinel_auth.user;
  out.sentinel_auth.password = sentinel_auth.password;
  if (tls) {
    out.tls.enabled = true;
    out.tls.verify = tls->verify;
    out.tls.ca_file = tls->ca_file;
    out.tls.ca_dir = tls->ca_dir;
    out.tls.cert_file = tls->cert_file;
    out.tls.key_file = tls->key_file;
    out.tls.server_name = tls->server_name;
    out.tls.fingerprint = tls->fingerprint;
  }
  return out;
}

}  // namespace sluice::config
