// The RLS readers the config loader calls (rls_reader.cpp): one envoyproxy/ratelimit
// document, and the main config's `rls:` section.
#pragma once

#include <optional>

#include "section.hpp"
#include "sluice/config/rule_set.hpp"

namespace sluice::config::internal {

// One document (a domain); nullopt for an empty one, or with the errors in `errors`.
std::optional<RlsDomain> read_rls_domain(const YAML::Node& doc, Errors& errors);

// The `rls:` section: settings, the files it names, its own domains.
std::optional<RlsSettings> read_rls(Section& top, Errors& errors);

}  // namespace sluice::config::internal
