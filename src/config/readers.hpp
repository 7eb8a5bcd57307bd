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

// The `rls:` section: settings, the files it names, its own domains.
std::optional<RlsSettings> read_rls(Section& top, Errors& errors);

}  // namespace sluice::config::internal
