// One domain's descriptors as envoyproxy/ratelimit matches them: a request descriptor (a list of
// key/value entries) walks the tree one level per entry; at each level key+value beats a
// `value*` prefix, which beats the key alone; the limit applies when the walk ends on a node
// with a rate_limit exactly at the descriptor's last entry. Every configured rate_limit owns a
// Sluice table (none when unlimited).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sluice/core/expected.hpp"
#include "sluice/local/policy.hpp"
#include "sluice/server/rls_config.hpp"

namespace sluice::server::rls {

struct Entry {
  std::string_view key;
  std::string_view value;
};

// A configured limit made real.
struct Limit {
  RlsRateLimit config;
  bool shadow_mode = false;
  std::optional<local::TableLimit> table;  // none when unlimited
  // The table as a policy of its own, for a descriptor decided alone (no copy per request).
  // Mutable: deciding changes the table's states, not the limit; Policy is thread-safe.
  mutable std::optional<local::Policy> alone;
};

// Builds the Limit of a rate_limit: a table of `budget_bytes` for the Sluice spec it maps to.
core::Expected<std::unique_ptr<Limit>> make_limit(const RlsRateLimit& config, bool shadow_mode,
                                                  std::size_t budget_bytes);

class DescriptorTree {
 public:
  // Errors: a table that cannot be made (its memory budget). `memory_per_limit` is the budget
  // of a limit reached through any entry without a fixed value.
  static core::Expected<DescriptorTree> build(const RlsDomain& domain,
                                              std::size_t memory_per_limit);

  // The limit `entries` reach, or null: no limit applies (no match, a level without a
  // rate_limit, or more or fewer entries than the limit's depth).
  const Limit* match(std::span<const Entry> entries) const;

  std::size_t limit_count() const { return limits_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <class V>
  using Map = std::unordered_map<std::string, V, Hash, std::equal_to<>>;

  // The nodes of one level that share a key.
  struct Choices {
    Map<std::size_t> exact;                                     // value -> node
    std::vector<std::pair<std::string, std::size_t>> prefixes;  // "prefix*", in config order
    std::optional<std::size_t> any;                             // the key alone
  };
  using Level = Map<Choices>;
  struct Node {
    const Limit* limit = nullptr;
    Level children;
  };

  const Node* find(const Level& level, const Entry& entry) const;
  core::Expected<Level> add(const std::vector<RlsDescriptor>& descriptors, bool fixed_path,
                            std::size_t memory_per_limit);

  std::vector<Node> nodes_;
  Level root_;
  std::vector<std::unique_ptr<Limit>> limits_;
};

}  // namespace sluice::server::rls
