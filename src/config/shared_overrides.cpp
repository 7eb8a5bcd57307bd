// The shared overrides' model (sluice/config/shared_overrides.hpp).
#include "sluice/config/shared_overrides.hpp"

#include <algorithm>

#include "sluice/spec/limit_spec.hpp"

namespace sluice::config {

std::string shared_override_field(std::string_view rule, std::string_view key) {
  std::string out(rule);
  out.push_back('/');
  out.append(key);
  return out;
}

std::vector<LimitVariant> overrides_in_force(const Rule& rule) {
  if (rule.shared_overrides.empty()) return rule.overrides;
  std::vector<LimitVariant> out;
  out.reserve(rule.overrides.size() + rule.shared_overrides.size());
  const auto shared = [&](const std::string& key) {
    return std::any_of(rule.shared_overrides.begin(), rule.shared_overrides.end(),
                       [&](const LimitVariant& v) { return v.name == key; });
  };
  for (const LimitVariant& v : rule.overrides) {
    if (!shared(v.name)) out.push_back(v);
  }
  out.insert(out.end(), rule.shared_overrides.begin(), rule.shared_overrides.end());
  return out;
}

namespace {
bool by_key(const LimitVariant& a, const LimitVariant& b) { return a.name < b.name; }
}  // namespace

SharedOverrides read_shared_overrides(
    const std::vector<std::pair<std::string, std::string>>& hash) {
  SharedOverrides out;
  for (const auto& [field, text] : hash) {
    const std::size_t slash = field.find('/');
    if (slash == 0 || slash == std::string::npos || slash + 1 == field.size()) {
      out.problems.push_back("field '" + field + "' is not RULE/KEY");
      continue;
    }
    auto spec = spec::parse_limit_spec(text);
    if (!spec) {
      out.problems.push_back("field '" + field + "': " + spec.error());
      continue;
    }
    out.by_rule[field.substr(0, slash)].push_back(
        LimitVariant{field.substr(slash + 1), text, std::move(*spec), 0});
  }
  // One order whatever the hash's: a set read twice compares equal.
  for (auto& [rule, list] : out.by_rule) {
    std::sort(list.begin(), list.end(), by_key);
  }
  return out;
}

void put_shared_override(SharedOverrides& shared, const std::string& rule, const std::string& key,
                         const std::optional<LimitVariant>& limit) {
  std::vector<LimitVariant>& list = shared.by_rule[rule];
  std::erase_if(list, [&](const LimitVariant& v) { return v.name == key; });
  if (limit) list.insert(std::upper_bound(list.begin(), list.end(), *limit, by_key), *limit);
  if (list.empty()) shared.by_rule.erase(rule);
}

namespace {

// What a rule kept in Redis is to hold of `shared`: its entries of the rule's algorithm.
std::vector<LimitVariant> wanted(const RuleSet& rules, const Rule& r, const SharedOverrides& shared,
                                 std::vector<std::string>* problems) {
  std::vector<LimitVariant> out;
  if (rules.storage_of(r) != Storage::kRedis) return out;
  const auto it = shared.by_rule.find(r.name);
  if (it == shared.by_rule.end()) return out;
  for (const LimitVariant& v : it->second) {
    if (v.limit.algorithm == r.limit.algorithm) {
      out.push_back(v);
    } else if (problems != nullptr) {
      problems->push_back("rule '" + r.name + "': shared override '" + v.name + "' is " +
                          v.limit.algorithm + " but the rule is " + r.limit.algorithm +
                          ": left out");
    }
  }
  return out;
}

}  // namespace

bool set_shared_overrides(RuleSet& rules, const SharedOverrides& shared,
                          std::vector<std::string>& problems) {
  bool changed = false;
  for (Rule& r : rules.rules) {
    std::vector<LimitVariant> want = wanted(rules, r, shared, &problems);
    if (r.shared_overrides != want) {
      r.shared_overrides = std::move(want);
      changed = true;
    }
  }
  return changed;
}

bool has_shared_overrides(const RuleSet& rules, const SharedOverrides& shared) {
  return std::all_of(rules.rules.begin(), rules.rules.end(), [&](const Rule& r) {
    return r.shared_overrides == wanted(rules, r, shared, nullptr);
  });
}

void keep_shared_overrides(const RuleSet& set, const Rule& from, Rule& to) {
  if (to.shared_overrides.empty() && set.storage_of(to) == Storage::kRedis) {
    to.shared_overrides = from.shared_overrides;
  }
}

void keep_shared_overrides(const RuleSet& from, RuleSet& to) {
  for (Rule& r : to.rules) {
    if (const Rule* before = from.rule(r.name)) keep_shared_overrides(to, *before, r);
  }
}

}  // namespace sluice::config
