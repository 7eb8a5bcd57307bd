// The readers the config loader calls: the main config (reader.cpp), one envoyproxy/ratelimit
// document and the main config's `rls:` section (rls_reader.cpp).
#pragma once

#include <optional>

#include "section.hpp"
#include "sluice/config/rule_set.hpp"

namespace sluice::config::internal {

// The main config's mapping into a RuleSet; its checks run after (check_all).
RuleSet read_config(const yaml::Node& root, Errors& errors, Origins& origins);

// One document (a domain); nullopt for an empty one, or with the errors in `errors`.
std::optional<RlsDomain> read_rls_domain(const yaml::Node& doc, Errors& errors);

// The `redis:` section (redis_reader.cpp): where Redis is, its secrets read, TLS.
std::optional<RedisSettings> read_redis(Section& top);

// A secret for AUTH: the first line of `file` (a trailing newline dropped, 1 to 1024 bytes,
// read under a small cap so a FIFO or a device cannot stall a reload), or the variable `env`;
// "" when neither is given. Both given, or one unreadable: reported at its field, nullopt.
std::optional<std::string> read_secret(Section& s, std::string_view file_field,
                                       const std::string& file, std::string_view env_field,
                                       const std::string& env);

// An environment variable's name as a shell writes it (letters, digits, '_').
core::Expected<std::string> parse_env_name(const std::string& t);

// A route's `adaptive_concurrency:` block (adaptive_reader.cpp); nullopt when it has none.
std::optional<AdaptiveConcurrency> read_adaptive_concurrency(Section& route);
// A rule's `tiers`, `overrides` and `on_change` (tier_reader.cpp); with tiers, the tier
// `default` becomes the rule's limit.
void read_limit_variants(Section& s, Rule& r, Origin& origin);
// cost_from, reserve and count_if (cost_reader.cpp).
void read_cost(Section& s, Rule& r);

// The `rls:` section: settings, the files it names, its own domains.
std::optional<RlsSettings> read_rls(Section& top, Errors& errors);

}  // namespace sluice::config::internal
