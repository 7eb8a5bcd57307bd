// Lookups of RuleSet (sluice/rules/rule_set.hpp). A set holds tens of entries, read at reload
// and by the admin API, so a linear search beats building an index.
#include "sluice/rules/rule_set.hpp"

#include <algorithm>

namespace sluice::rules {
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

}  // namespace sluice::rules
