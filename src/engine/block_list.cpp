// Loop::list_blocks (sluice/engine/block_list.hpp): a rule's blocked keys, from its block table
// here, or from its list in Redis (backend/redis/block_list.hpp) with each listed key's block
// asked for its PTTL, so that a block lifted through another instance (or past its end) is not
// listed and the time left is the one Redis enforces.
#include "sluice/engine/block_list.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <memory>
#include <utility>

#include "block_table.hpp"
#include "keys.hpp"
#include "sluice/backend/redis/block_list.hpp"
#include "sluice/backend/redis/store.hpp"
#include "sluice/engine/loop.hpp"
#include "snapshot.hpp"

namespace sluice::engine {
namespace {

namespace redis = backend::redis;

BlockList refused(ErrorKind kind, std::string error) {
  BlockList out;
  out.error_kind = kind;
  out.error = std::move(error);
  return out;
}

BlockList unavailable(const std::string& rule) {
  return refused(ErrorKind::kUnavailable,
                 "rule '" + rule +
                     "' is kept in Redis, which did not answer; try again when it "
                     "is back");
}

// The key as listed: its first bytes, or its hash under log_key: hash.
BlockedKey shown(std::string_view key, const table::KeyHash& h, std::size_t key_bytes,
                 core::Nanos left, bool hashed) {
  BlockedKey out;
  if (hashed) {
    detail::hash_hex(h.bucket, out.key);
  } else {
    out.key = std::string(detail::cut_key(key, BlockList::kKeyBytes));
  }
  out.key_bytes = key_bytes;
  out.left = left;
  return out;
}

// The longest left first, then by the key as shown.
void order(std::vector<BlockedKey>& keys) {
  std::sort(keys.begin(), keys.end(), [](const BlockedKey& a, const BlockedKey& b) {
    return a.left != b.left ? a.left > b.left : a.key < b.key;
  });
}

BlockList local_blocks(const CompiledRule& rule, std::size_t n, core::Nanos now) {
  BlockList out;
  out.hashed = rule.rule.log_key == config::LogKey::kHash;
  out.capacity = detail::BlockTable::kCapacity;
  const auto listed = rule.limit.blocks->list(n, now, out.total);
  out.read = listed.size();
  for (const auto& l : listed) {
    out.keys.push_back(shown(l.text, l.hash, l.key_size, l.until - now, out.hashed));
  }
  order(out.keys);
  return out;
}

// Each listed key's block asked for its PTTL (one command each: in a cluster each is in its
// key's own slot); the list then holds those still in force.
void check_listed(redis::Store& store, std::shared_ptr<const CompiledRule> rule, BlockList out,
                  std::vector<std::string> keys, std::function<void(BlockList)> done) {
  struct Gather {
    BlockList out;
    std::vector<std::string> keys;
    std::vector<long long> left_ms;
    std::size_t waiting = 0;
    bool failed = false;
    std::function<void(BlockList)> done;
  };
  auto g = std::make_shared<Gather>();
  g->left_ms.assign(keys.size(), 0);
  g->waiting = keys.size();
  g->out = std::move(out);
  g->keys = std::move(keys);
  g->done = std::move(done);
  for (std::size_t i = 0; i < g->keys.size(); ++i) {
    const CompiledLimit& limit = rule->limit_for(g->keys[i], std::nullopt);
    const std::string block = redis::block_key(*limit.remote, g->keys[i]);
    store.command({"PTTL", block}, block, [g, i, rule](redis::Outcome o) {
      const auto* r = std::get_if<redis::Reply>(&o);
      if (r == nullptr || r->type != redis::Reply::Type::kInteger) g->failed = true;
      if (!g->failed) g->left_ms[i] = r->integer;
      if (--g->waiting > 0) return;
      if (g->failed) return g->done(unavailable(rule->rule.name));
      for (std::size_t k = 0; k < g->keys.size(); ++k) {
        if (g->left_ms[k] <= 0) continue;  // lifted, or ended since the list was read
        const std::string& key = g->keys[k];
        g->out.keys.push_back(shown(key, table::hash_key(key), key.size(),
                                    g->left_ms[k] * core::kNanosPerMilli, g->out.hashed));
      }
      order(g->out.keys);
      g->done(std::move(g->out));
    });
  }
}

}  // namespace

void Loop::list_blocks(const std::string& rule, std::size_t n, core::Nanos now,
                       std::function<void(BlockList)> done) {
  const auto later = [this, &done](BlockList list) {
    boost::asio::post(
        io_, [done = std::move(done), list = std::move(list)]() mutable { done(std::move(list)); });
  };
  const std::shared_ptr<const CompiledRule> r = snapshot()->shared_rule(rule);
  if (r == nullptr) return later(refused(ErrorKind::kUnknownRule, "unknown rule '" + rule + "'"));
  if (!r->rule.block) {
    return later(refused(ErrorKind::kNoBlocks,
                         "rule '" + rule + "' blocks no keys (it has no on_deny: block)"));
  }
  n = std::clamp<std::size_t>(n, 1, BlockList::kMaxListed);
  if (!r->limit.in_redis()) return later(local_blocks(*r, n, now));
  if (store_ == nullptr) return later(unavailable(rule));
  BlockList out;
  out.redis = true;
  out.hashed = r->rule.log_key == config::LogKey::kHash;
  out.capacity = redis::kBlockListCapacity;
  const std::string& list = r->limit.remote->options().block_list;
  redis::Store* store = store_.get();
  store->command(
      redis::block_list_read(list, n), list,
      [store, r, out = std::move(out), done = std::move(done)](redis::Outcome o) mutable {
        auto read = redis::parse_block_list(o);
        if (!read) return done(unavailable(r->rule.name));
        out.total = read->total;
        out.read = read->keys.size();
        if (read->keys.empty()) return done(std::move(out));
        check_listed(*store, r, std::move(out), std::move(read->keys), std::move(done));
      });
}

}  // namespace sluice::engine
