// Per-key overrides of rules kept in Redis, shared by every instance (docs/admin-api.md,
// "Overrides"): how they sit beside a rule's file overrides, and how Redis's copy reads back.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/config/rule_set.hpp"

namespace sluice::config {

// Where Redis keeps them is the engine's (engine/shared_overrides.hpp); their form here: one
// entry per override, "RULE/KEY" (a rule's name has no '/') -> the limit text.
std::string shared_override_field(std::string_view rule, std::string_view key);

// The rule's overrides in force: its file ones, each replaced by a shared one of the same key,
// then the other shared ones.
std::vector<LimitVariant> overrides_in_force(const Rule& rule);

// Redis's hash, read back: each rule's overrides, by rule name. An entry that is not
// "RULE/KEY" -> a valid limit is left out, and said in `problems`.
struct SharedOverrides {
  std::map<std::string, std::vector<LimitVariant>, std::less<>> by_rule;
  std::vector<std::string> problems;
};
SharedOverrides read_shared_overrides(const std::vector<std::pair<std::string, std::string>>& hash);

// One override set (`limit` nullopt: removed) in `shared`, as Redis now holds it after a
// write from here; the rule's list stays sorted by key.
void put_shared_override(SharedOverrides& shared, const std::string& rule, const std::string& key,
                         const std::optional<LimitVariant>& limit);

// Sets each rule kept in Redis to `shared`'s overrides of it and every other rule to none;
// true when anything changed. An override whose algorithm is not its rule's is left out
// (a rule changed since it was set), and said in `problems`.
bool set_shared_overrides(RuleSet& rules, const SharedOverrides& shared,
                          std::vector<std::string>& problems);

// Whether `rules` holds exactly what set_shared_overrides would set (no copy, no change).
bool has_shared_overrides(const RuleSet& rules, const SharedOverrides& shared);

// A rule set about to replace `from` (a reload, a PUT of the rule) keeps the shared overrides
// of the rules still kept in Redis: they are Redis's, not the file's.
void keep_shared_overrides(const RuleSet& from, RuleSet& to);
// The same for one rule of `set`: `to` replaces `from`.
void keep_shared_overrides(const RuleSet& set, const Rule& from, Rule& to);

}  // namespace sluice::config
