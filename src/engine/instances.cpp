// Loop::heartbeat and Loop::instances (sluice/engine/instances.hpp): the instances' list kept in
// the shared Redis as a sorted set of ids by last heartbeat, and one key per instance under a
// TTL. One hash tag, so every key is in one slot of a cluster.
#include <memory>
#include <utility>

#include "sluice/backend/redis/store.hpp"
#include "sluice/engine/loop.hpp"
#include "snapshot.hpp"

namespace sluice::engine {
namespace {

namespace redis = backend::redis;

const std::string kIndex = "sluice:{instances}";

std::string instance_key(std::string_view id) { return kIndex + ":" + std::string(id); }

const redis::Reply* reply_of(const redis::Outcome& o) {
  const auto* r = std::get_if<redis::Reply>(&o);
  return r != nullptr && !r->is_error() ? r : nullptr;
}

// ZRANGE ... WITHSCORES: id, score, id, score...
std::vector<InstanceRecord> from_index(const redis::Reply& r) {
  std::vector<InstanceRecord> out;
  if (r.type != redis::Reply::Type::kArray) return out;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    InstanceRecord rec;
    rec.id = r.elements[i].str;
    try {
      rec.last_seen_ms = static_cast<std::int64_t>(std::stod(r.elements[i + 1].str));
    } catch (const std::exception&) {
      continue;  // not a score this code wrote
    }
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace

bool Loop::heartbeat(const std::string& id, const std::string& about, std::int64_t now_unix_ms) {
  snapshot();
  if (store_ == nullptr || !(snapshot_->rules.redis && snapshot_->rules.redis->configured()))
    return false;
  const auto ignore = [](redis::Outcome) {};
  store_->command({"SET", instance_key(id), about, "PX", std::to_string(kHeartbeatTtlMs)}, kIndex,
                  ignore);
  store_->command({"ZADD", kIndex, std::to_string(now_unix_ms), id}, kIndex, ignore);
  store_->command(
      {"ZREMRANGEBYSCORE", kIndex, "-inf", "(" + std::to_string(now_unix_ms - kInstanceForgetMs)},
      kIndex, ignore);
  return true;
}

void Loop::instances(std::int64_t now_unix_ms,
                     std::function<void(std::optional<std::vector<InstanceRecord>>)> done) {
  snapshot();
  if (store_ == nullptr || !(snapshot_->rules.redis && snapshot_->rules.redis->configured())) {
    boost::asio::post(io_, [done = std::move(done)] { done(std::nullopt); });
    return;
  }
  auto store = store_.get();
  store->command({"ZRANGEBYSCORE", kIndex, std::to_string(now_unix_ms - kInstanceForgetMs), "+inf",
                  "WITHSCORES", "LIMIT", "0", std::to_string(kMaxInstancesListed)},
                 kIndex, [store, done = std::move(done)](redis::Outcome o) mutable {
                   const redis::Reply* r = reply_of(o);
                   if (r == nullptr) return done(std::nullopt);
                   auto records = std::make_shared<std::vector<InstanceRecord>>(from_index(*r));
                   if (records->empty()) return done(std::move(*records));
                   std::vector<std::string> args{"MGET"};
                   for (const auto& rec : *records) args.push_back(instance_key(rec.id));
                   store->command(std::move(args), kIndex,
                                  [records, done = std::move(done)](redis::Outcome got) {
                                    const redis::Reply* m = reply_of(got);
                                    if (m == nullptr || m->elements.size() != records->size()) {
                                      return done(std::nullopt);
                                    }
                                    for (std::size_t i = 0; i < records->size(); ++i) {
                                      const redis::Reply& v = m->elements[i];
                                      (*records)[i].live = v.type == redis::Reply::Type::kString;
                                      if ((*records)[i].live) (*records)[i].about = v.str;
                                    }
                                    done(std::move(*records));
                                  });
                 });
}

}  // namespace sluice::engine
