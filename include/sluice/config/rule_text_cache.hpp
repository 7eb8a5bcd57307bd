// Each rule's write-back YAML, kept with the rule it was made from: writing back a config of
// 10,000 rules after one admin change emits one rule anew, not 10,000 (yaml-cpp's emitter costs
// about 100 us a rule, most of it checking how each string must be quoted).
#pragma once

#include <string>
#include <vector>

#include "sluice/config/rule_set.hpp"

namespace sluice::config {

class RuleTextCache {
 public:
  // Brings the cache to `rules`: each rule's YAML block ("NAME:\n  limit: ...\n", unindented)
  // is made again only when the rule is not the one it was last made from. A rule is looked
  // for at its own position first, so a change that moves no rule hashes no name.
  void update(const std::vector<Rule>& rules);
  // The block of rules[i] of the last update().
  const std::string& text(std::size_t i) const { return entries_[i].yaml; }

 private:
  struct Entry {
    Rule rule;
    std::string yaml;
  };
  std::vector<Entry> entries_;
};

// to_yaml (loader.hpp) with each rule's text from `cache`: the same text.
std::string to_yaml(const RuleSet& rules, RuleTextCache& cache);

}  // namespace sluice::config
