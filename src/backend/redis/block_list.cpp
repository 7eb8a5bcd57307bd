// A rule's list of blocks in Redis (sluice/backend/redis/block_list.hpp).
#include "sluice/backend/redis/block_list.hpp"

namespace sluice::backend::redis {
namespace {

constexpr const char* kAdd = R"(
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1) end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return over)";

// Redis's own clock ends the blocks (PX), so it is the one that says which have ended.
constexpr const char* kRead = R"(
local t = redis.call('TIME')
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t[1] * 1000 + math.floor(t[2] / 1000))
return {redis.call('ZCARD', KEYS[1]), redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)})";

}  // namespace

std::string block_list_key(std::string_view rule) {
  return "sluice:blocks:{" + std::string(rule) + "}";
}

std::string block_key(const RemoteLimit& limit, std::string_view key) {
  return limit.state_key(key) + ":block";
}

const Script& block_list_add_script() {
  static const Script script{kAdd};
  return script;
}

std::vector<std::string> block_list_read(const std::string& list, std::size_t n) {
  return {"EVAL", kRead, "1", list, std::to_string(n)};
}

std::optional<BlockListRead> parse_block_list(const Outcome& outcome) {
  using Type = Reply::Type;
  const auto* r = std::get_if<Reply>(&outcome);
  if (r == nullptr || r->type != Type::kArray || r->elements.size() != 2 ||
      r->elements[0].type != Type::kInteger || r->elements[1].type != Type::kArray ||
      r->elements[0].integer < 0) {
    return std::nullopt;
  }
  BlockListRead out;
  out.total = static_cast<std::size_t>(r->elements[0].integer);
  for (const Reply& m : r->elements[1].elements) {
    if (m.type != Type::kString) return std::nullopt;
    out.keys.push_back(m.str);
  }
  return out;
}

}  // namespace sluice::backend::redis
