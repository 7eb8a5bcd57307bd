// Loop::read_shared_overrides and Loop::write_shared_override (sluice/engine/shared_overrides.hpp):
// the shared overrides' hash and generation in Redis, each read or change one script call, so
// a change and its generation are never seen apart.
#include "sluice/engine/shared_overrides.hpp"

#include <boost/asio/post.hpp>
#include <memory>
#include <utility>

#include "sluice/backend/redis/store.hpp"
#include "sluice/config/shared_overrides.hpp"
#include "sluice/engine/loop.hpp"
#include "snapshot.hpp"

namespace sluice::engine {
namespace {

namespace redis = backend::redis;

// KEYS: the hash, the generation. ARGV: the generation known, the cap. Reply: {generation}
// when it is the one known, {generation, -1} beyond the cap, else {generation, HGETALL}.
constexpr const char* kRead = R"(
local g = redis.call('GET', KEYS[2]) or '0'
if g == ARGV[1] then return {g} end
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[2]) then return {g, -1} end
return {g, redis.call('HGETALL', KEYS[1])})";

// KEYS: the hash, the generation. ARGV: field, cap, limit (none: remove). Reply: the new
// generation, or -1 when a new field would pass the cap.
constexpr const char* kWrite = R"(
if ARGV[3] == nil then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and
     redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return redis.call('INCR', KEYS[2]))";

const redis::Reply* reply_of(const redis::Outcome& o) {
  const auto* r = std::get_if<redis::Reply>(&o);
  return r != nullptr && !r->is_error() ? r : nullptr;
}

std::optional<SharedOverridesRead> read_of(const redis::Reply& r) {
  using Type = redis::Reply::Type;
  if (r.type != Type::kArray || r.elements.empty() || r.elements[0].type != Type::kString) {
    return std::nullopt;
  }
  SharedOverridesRead out;
  out.generation = r.elements[0].str;
  if (r.elements.size() < 2) return out;
  const redis::Reply& hash = r.elements[1];
  if (hash.type == Type::kInteger) {
    out.too_many = true;
    return out;
  }
  if (hash.type != Type::kArray) return std::nullopt;
  out.hash.emplace();
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
    out.hash->emplace_back(hash.elements[i].str, hash.elements[i + 1].str);
  }
  return out;
}

}  // namespace

void Loop::read_shared_overrides(const std::string& known,
                                 std::function<void(std::optional<SharedOverridesRead>)> done) {
  snapshot();
  if (store_ == nullptr || !(snapshot_->rules.redis && snapshot_->rules.redis->configured())) {
    boost::asio::post(io_, [done = std::move(done)] { done(std::nullopt); });
    return;
  }
  const std::string hash(kSharedOverridesHash);
  store_->command({"EVAL", kRead, "2", hash, std::string(kSharedOverridesGeneration), known,
                   std::to_string(kMaxSharedOverrides)},
                  hash, [done = std::move(done)](redis::Outcome o) {
                    const redis::Reply* r = reply_of(o);
                    done(r != nullptr ? read_of(*r) : std::nullopt);
                  });
}

void Loop::write_shared_override(const std::string& rule, const std::string& key,
                                 const std::optional<std::string>& limit,
                                 std::function<void(SharedWrite, std::string)> done) {
  snapshot();
  if (store_ == nullptr || !(snapshot_->rules.redis && snapshot_->rules.redis->configured())) {
    boost::asio::post(io_, [done = std::move(done)] { done(SharedWrite::kNoRedis, ""); });
    return;
  }
  const std::string hash(kSharedOverridesHash);
  std::vector<std::string> args{"EVAL",
                                kWrite,
                                "2",
                                hash,
                                std::string(kSharedOverridesGeneration),
                                config::shared_override_field(rule, key),
                                std::to_string(kMaxSharedOverrides)};
  if (limit) args.push_back(*limit);
  store_->command(std::move(args), hash, [done = std::move(done)](redis::Outcome o) {
    const redis::Reply* r = reply_of(o);
    if (r == nullptr || r->type != redis::Reply::Type::kInteger) {
      return done(SharedWrite::kFailed, "");
    }
    if (r->integer < 0) return done(SharedWrite::kFull, "");
    done(SharedWrite::kDone, std::to_string(r->integer));
  });
}

}  // namespace sluice::engine
