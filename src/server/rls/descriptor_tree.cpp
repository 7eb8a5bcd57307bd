// DescriptorTree (descriptor_tree.hpp): building the levels and their tables, and the walk.
#include "descriptor_tree.hpp"

namespace sluice::server::rls {
namespace {

// A limit reached only through fixed values has exactly one key: one page holds its bucket.
constexpr std::size_t kOneKeyBudget = 4096;

bool is_prefix(std::string_view value) { return !value.empty() && value.back() == '*'; }

}  // namespace

core::Expected<std::unique_ptr<Limit>> make_limit(const RlsRateLimit& config, bool shadow_mode,
                                                  std::size_t budget_bytes) {
  auto limit = std::make_unique<Limit>();
  limit->config = config;
  limit->shadow_mode = shadow_mode;
  if (config.unlimited) return limit;
  auto spec = rls_limit_spec(config);
  if (!spec) return core::make_error(spec.error());
  auto table = local::make_table_limit(*spec, budget_bytes);
  if (!table) return core::make_error(table.error());
  limit->table = *table;
  limit->alone.emplace(local::Combine::kAllMustPass, std::vector<local::TableLimit>{*table});
  return limit;
}

core::Expected<DescriptorTree> DescriptorTree::build(const RlsDomain& domain,
                                                     std::size_t memory_per_limit) {
  DescriptorTree tree;
  auto root = tree.add(domain.descriptors, true, memory_per_limit);
  if (!root) return core::make_error(root.error());
  tree.root_ = std::move(root).value();
  return tree;
}

core::Expected<DescriptorTree::Level> DescriptorTree::add(
    const std::vector<RlsDescriptor>& descriptors, bool fixed_path, std::size_t memory_per_limit) {
  Level level;
  for (const auto& d : descriptors) {
    const bool fixed = fixed_path && !d.value.empty() && !is_prefix(d.value);
    const std::size_t index = nodes_.size();
    nodes_.emplace_back();
    if (d.rate_limit) {
      auto limit =
          make_limit(*d.rate_limit, d.shadow_mode, fixed ? kOneKeyBudget : memory_per_limit);
      if (!limit) {
        return core::make_error("line " + std::to_string(d.line) + ": " + limit.error());
      }
      limits_.push_back(std::move(limit).value());
      nodes_[index].limit = limits_.back().get();
    }
    Choices& choices = level[d.key];
    if (d.value.empty()) {
      choices.any = index;
    } else if (is_prefix(d.value)) {
      choices.prefixes.emplace_back(d.value.substr(0, d.value.size() - 1), index);
    } else {
      choices.exact[d.value] = index;
    }
    // Built aside: nodes_ grows while the children are added.
    auto children = add(d.descriptors, fixed, memory_per_limit);
    if (!children) return children;
    nodes_[index].children = std::move(children).value();
  }
  return level;
}

const DescriptorTree::Node* DescriptorTree::find(const Level& level, const Entry& entry) const {
  const auto by_key = level.find(entry.key);
  if (by_key == level.end()) return nullptr;
  const Choices& c = by_key->second;
  if (!entry.value.empty()) {
    if (auto it = c.exact.find(entry.value); it != c.exact.end()) return &nodes_[it->second];
  }
  for (const auto& [prefix, index] : c.prefixes) {
    if (entry.value.starts_with(prefix)) return &nodes_[index];
  }
  return c.any ? &nodes_[*c.any] : nullptr;
}

const Limit* DescriptorTree::match(std::span<const Entry> entries) const {
  const Level* level = &root_;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Node* node = find(*level, entries[i]);
    if (node == nullptr) return nullptr;
    if (i + 1 == entries.size()) return node->limit;
    if (node->children.empty()) return nullptr;  // the request goes deeper than the config
    level = &node->children;
  }
  return nullptr;
}

}  // namespace sluice::server::rls
