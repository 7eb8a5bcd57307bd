// One RLS domain's descriptors as envoyproxy/ratelimit matches them: a request descriptor (a
// list of key/value entries) walks the tree one level per entry; at each level key+value beats
// a `value*` prefix, which beats the key alone; the limit applies when the walk ends on a node
// with a rate_limit exactly at the descriptor's last entry. Internal to the engine.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sluice/config/rls.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/engine/ask.hpp"
#include "snapshot.hpp"

namespace sluice::engine::detail {

// The limit of a configured rate_limit: `path` names it ("key=value/key"), `fixed` says it is
// reached only through fixed values (one key).
using MakeLimit = std::function<core::Expected<const CompiledLimit*>(
    const config::RlsDescriptor& d, const std::string& path, bool fixed)>;

class RlsTree {
 public:
  static core::Expected<RlsTree> build(const config::RlsDomain& domain, const MakeLimit& make);

  // The limit `entries` reach, or null: no limit applies (no match, a level without a
  // rate_limit, or more or fewer entries than the limit's depth).
  const CompiledLimit* match(std::span<const RlsEntry> entries) const;

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
    const CompiledLimit* limit = nullptr;
    Level children;
  };

  const Node* find(const Level& level, const RlsEntry& entry) const;
  core::Expected<Level> add(const std::vector<config::RlsDescriptor>& descriptors,
                            const std::string& path, bool fixed_path, const MakeLimit& make);

  std::vector<Node> nodes_;
  Level root_;
};

// The compiled domains of a snapshot, and the limits their trees point to (by identity:
// "domain/key=value/...", so that a reload keeps the tables of unchanged descriptors).
struct RlsDomains {
  std::map<std::string, RlsTree, std::less<>> domains;
  std::map<std::string, std::unique_ptr<CompiledLimit>, std::less<>> limits;
  bool redis = false;  // every limit kept in Redis (rls.storage: redis)
};

}  // namespace sluice::engine::detail
