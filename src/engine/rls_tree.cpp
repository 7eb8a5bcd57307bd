// RlsTree (rls_tree.hpp): building the levels and the walk.
#include "rls_tree.hpp"

namespace sluice::engine::detail {
namespace {

bool is_prefix(std::string_view value) { return !value.empty() && value.back() == '*'; }

}  // namespace

core::Expected<RlsTree> RlsTree::build(const config::RlsDomain& domain, const MakeLimit& make) {
  RlsTree tree;
  auto root = tree.add(domain.descriptors, domain.name, true, make);
  if (!root) return core::make_error(root.error());
  tree.root_ = std::move(root).value();
  return tree;
}

core::Expected<RlsTree::Level> RlsTree::add(const std::vector<config::RlsDescriptor>& descriptors,
                                            const std::string& path, bool fixed_path,
                                            const MakeLimit& make) {
  Level level;
  for (const auto& d : descriptors) {
    const bool fixed = fixed_path && !d.value.empty() && !is_prefix(d.value);
    const std::string here = path + "/" + d.key + (d.value.empty() ? "" : "=" + d.value);
    const std::size_t index = nodes_.size();
    nodes_.emplace_back();
    if (d.rate_limit) {
      auto limit = make(d, here, fixed);
      if (!limit) return core::make_error("line " + std::to_string(d.line) + ": " + limit.error());
      nodes_[index].limit = *limit;
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
    auto children = add(d.descriptors, here, fixed, make);
    if (!children) return children;
    nodes_[index].children = std::move(children).value();
  }
  return level;
}

const RlsTree::Node* RlsTree::find(const Level& level, const RlsEntry& entry) const {
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

const CompiledLimit* RlsTree::match(std::span<const RlsEntry> entries) const {
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

}  // namespace sluice::engine::detail
