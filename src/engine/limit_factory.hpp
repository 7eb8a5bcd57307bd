// One way to make a limit real, for every kind of limit the engine holds (rules, RLS limits and
// overrides, inline limits, CL.THROTTLE's parameter sets kept in Redis): where its state
// lives, and what a new config keeps of the limit it replaces. Internal to the engine.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/backend/redis/remote_limit.hpp"
#include "sluice/backend/redis/store.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/core/expected.hpp"
#include "snapshot.hpp"

namespace sluice::engine::detail {

// Where a limit's state lives: a table of `memory` bytes in this process, or Redis.
struct Placement {
  std::size_t memory = 0;
  std::optional<backend::redis::RemoteLimitOptions> redis;  // set: kept in Redis
  // The name its Redis keys are kept under ("rls", "cl.throttle"; empty: the limit's name).
  std::string redis_name;
  // The wall clock a calendar window reads its Unix time from (Engine's); null: `now` is.
  const core::Clock* wall = nullptr;
};

// The Redis options of the config (a rule's, RLS's, CL.THROTTLE's, each with the defaults of
// `redis:` filled in) as the backend takes them. The one mapping from config to backend.
backend::redis::RemoteLimitOptions remote_options(const config::RedisRuleOptions& o,
                                                  core::Nanos permit_ttl = 60 *
                                                                           core::kNanosPerSecond);

// The store each event loop's Redis limits talk to (`redis:` url or sentinels with the db, the
// secrets and TLS folded in); nullopt when no store is configured.
std::optional<backend::redis::StoreOptions> store_options(const config::RuleSet& rules);

// `spec` made real as `name` at `where`. With `previous` (the limit it replaces on a reload):
// kept as it is when nothing about it changed (its keys keep their state, in Redis its local
// fallback too), its table retuned when only the numbers did (same algorithm and memory: every
// key keeps its state under the new parameters, as `on_change` says), else new. Errors: a
// table that cannot be made, Redis options the algorithm cannot take.
core::Expected<CompiledLimit> make_limit(std::string name, const spec::LimitSpec& spec,
                                         const Placement& where, const CompiledLimit* previous,
                                         core::Nanos now,
                                         config::OnChange on_change = config::OnChange::kKeep);

// Limits made at their first use and kept for every later ask that names them (inline limits,
// CL.THROTTLE's parameter sets in Redis, RLS overrides): at most `cap`. Thread-safe.
class LazyLimits {
 public:
  explicit LazyLimits(std::size_t cap) : cap_(cap) {}

  enum class Miss { kNone, kFull, kFailed };
  struct Got {
    const CompiledLimit* limit = nullptr;
    Miss miss = Miss::kNone;
    std::string error;  // kFailed: make()'s error
  };
  // The limit kept under `id`, or the one make() returns, kept under it (unless the cap is
  // reached: kFull).
  Got get(std::string_view id, const std::function<core::Expected<CompiledLimit>()>& make);

  // Calls f(const CompiledLimit&) for each limit kept (metrics; takes the lock).
  template <class F>
  void for_each(F&& f) {
    std::lock_guard lock(mutex_);
    for (const auto& [id, limit] : limits_) f(*limit);
  }

 private:
  const std::size_t cap_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<const CompiledLimit>, std::less<>> limits_;
};

}  // namespace sluice::engine::detail
