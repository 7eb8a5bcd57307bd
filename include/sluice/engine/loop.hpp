// The engine as one event loop uses it: the entry point every frontend calls once per request,
// with the loop's own Redis store (batching the loop's Redis decisions), its cached snapshot
// and its timers. One per event loop; not thread-safe; the loop's thread only.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/core/inline_function.hpp"
#include "sluice/engine/ask.hpp"
#include "sluice/engine/block_list.hpp"
#include "sluice/engine/instances.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/engine/settle.hpp"
#include "sluice/engine/shared_overrides.hpp"
#include "sluice/metrics/histogram.hpp"
#include "sluice/metrics/registry.hpp"
#include "sluice/support/shared_handler.hpp"

namespace sluice::backend::redis {
class Store;
struct QueryItem;
struct Answer;
}  // namespace sluice::backend::redis

namespace sluice::engine {

class Engine;

class Loop {
 public:
  // Makes the loop's Redis store when the config names one, its deadlines in `clock` (the
  // loop's; the steady clock when null), and again when a reload names one first; a reload
  // that changes the redis settings reconfigures it (Store::reconfigure). Registers the
  // store's counters with `registry` when given. With `timer` (a clock that reads time, not a
  // cached one) and `registry`, times decisions: every one that asks Redis, and each Redis call,
  // and 1 in kTimeEvery of those decided here (two clock reads), for the histograms of
  // docs/metrics.md.
  Loop(Engine& engine, boost::asio::io_context& io, metrics::Registry* registry = nullptr,
       const core::Clock* clock = nullptr, const core::Clock* timer = nullptr);
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // The entry point. kDone: `out` is complete. kPending: co_await async_complete(out, ...)
  // (or pass a callback) before reading it; `out` must live until then. A rule kept in Redis
  // that the store answers without waiting (a leased permit from a live pool no earlier ask
  // waits on, a refusal it keeps) is concluded here too: kDone, as a local decision.
  Progress decide(const Ask& ask, core::Nanos now, Outcome& out);

  // Completes a pending outcome on this loop: its Redis limits are asked together with the
  // loop's other pending ones; when Redis fails or is slow, each limit's failure policy
  // answers within the store's timeout. Signature void().
  template <class Token>
  auto async_complete(Outcome& out, Token&& token) {
    return boost::asio::async_initiate<Token, void()>(
        [this, &out](auto handler) { complete(out, Resume(std::move(handler))); }, token);
  }

  // kAllow with out.queued > 0 (a route's adaptive limit is reached): waits, on a timer of
  // this loop, for the limit to hand the request a permit, at most out.queued; then `out` is
  // kAllow holding the permit, or kDeny with the route's refusal. Signature void().
  template <class Token>
  auto async_permit(Outcome& out, Token&& token) {
    return boost::asio::async_initiate<Token, void()>(
        [this, &out](auto handler) {
          await_permit(out, support::shared_handler(std::move(handler)));
        },
        token);
  }

  // During async_permit: the request's client left, so the wait ends now and its place in the
  // queue goes back (not counted as shed); the wait's handler still runs. No-op otherwise.
  void leave_queue(Outcome& out);

  // The request is done: permits held in Redis go back (local ones with out.reset()). Until
  // then the loop's store renews them, every third of their rule's permit_ttl.
  void release(Outcome& out);
  // The same, and the route's adaptive limit learns what its upstream did: `result`, and
  // `now`, when it ended (the loop's clock, as the decision's `now`).
  void release(Outcome& out, UpstreamResult result, core::Nanos now);
  // Gives back a permit handed out by the decision service, wherever it is held.
  bool release_lease(std::string_view token);

  // The response head of `out`'s request arrived (`status`, its fields through `header`):
  // charges each settling rule what the response says, less what admission reserved:
  // cost_from's stated cost (a missing or malformed value: the reserve stands), nothing when
  // count_if does not list `status`. Local rules at once; rules kept in Redis in the
  // background on this loop's store, the response never waiting for it: a settlement Redis
  // does not take (down, slow, the breaker open) is lost, so the reserve stands, counted in
  // sluice_rule_settlements_lost_total. Once: a second call does nothing. A request that never
  // gets a response keeps its reserve.
  void settle(Outcome& out, int status, const HeaderLookup& header, core::Nanos now);

  // With Redis configured: this instance's heartbeat (`about`, under kHeartbeatTtlMs) into
  // the Redis every instance shares (instances.hpp); false without Redis.
  bool heartbeat(const std::string& id, const std::string& about, std::int64_t now_unix_ms);
  // Every instance seen there in the last hour, by id; nullopt without Redis or when it fails.
  void instances(std::int64_t now_unix_ms,
                 std::function<void(std::optional<std::vector<InstanceRecord>>)> done);

  // With Redis configured: the shared overrides' generation, and their hash when the
  // generation is not `known` (shared_overrides.hpp); nullopt without Redis or when it fails.
  void read_shared_overrides(const std::string& known,
                             std::function<void(std::optional<SharedOverridesRead>)> done);
  // Sets (or, `limit` nullopt, removes) one shared override and bumps the generation, at once;
  // `done` is given the new generation when written.
  void write_shared_override(const std::string& rule, const std::string& key,
                             const std::optional<std::string>& limit,
                             std::function<void(SharedWrite, std::string)> done);

  // Up to `n` (at most BlockList::kMaxListed) of the keys rule `rule` blocks at `now`
  // (block_list.hpp): read here for a local rule, from Redis for one kept there (then `done`
  // runs when Redis answered, or with kUnavailable). `done` runs on this loop, never inside
  // this call.
  void list_blocks(const std::string& rule, std::size_t n, core::Nanos now,
                   std::function<void(BlockList)> done);

  Engine& engine() { return engine_; }
  // The rules this loop decides with (refreshed when the engine's version moves), and a hold
  // on them for a caller that keeps them across decisions.
  const config::RuleSet& rules();
  std::shared_ptr<const config::RuleSet> shared_rules();

 private:
  // The Redis permits a completed outcome holds for its request: renewed until release().
  void hold_leases(Outcome& out);
  // A pending outcome's one Redis query answered by the store on the spot, concluded here
  // (kDone); kPending when the store has to ask Redis, or the outcome has several queries.
  Progress answer_now(Outcome& out);
  // What a pending outcome resumes: a coroutine's handler is held in place.
  using Resume = core::InlineFunction<void(), 32>;
  void complete(Outcome& out, Resume done);
  // One of a pending outcome's queries answered; true: it was the last, the outcome is
  // concluded (its caller is to be resumed).
  bool part_answered(Outcome& out, std::size_t part, backend::redis::Answer answer);
  // Every answer in: the outcome concluded and timed.
  void conclude(Outcome& out);
  // One settlement of a rule kept in Redis, sent on this loop's store (settle.cpp).
  void settle_in_redis(Outcome& out, const backend::redis::QueryItem& item, std::int64_t delta,
                       RuleCounters* counters);
  void await_permit(Outcome& out, std::function<void()> done);
  const std::shared_ptr<const Snapshot>& snapshot();
  // The snapshot's `redis:` into the store: made, or reconfigured when its settings changed.
  void follow_redis_settings();

  Engine& engine_;
  boost::asio::io_context& io_;
  metrics::Registry* registry_;
  const core::Clock* clock_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::uint64_t version_ = 0;
  std::unique_ptr<backend::redis::Store> store_;
  metrics::Registry::Registration metrics_;
  std::unique_ptr<backend::redis::Answer> now_answer_;  // answer_now()'s, its room reused

  // Decision and Redis call times: written by this loop only, read by a scrape.
  static constexpr std::uint32_t kTimeEvery = 64;
  const core::Clock* timer_;
  std::uint32_t untimed_ = 0;
  metrics::LoopHistogram local_times_;
  metrics::LoopHistogram redis_times_;
  metrics::LoopHistogram call_times_;
  metrics::Registry::Registration time_metrics_;  // after the histograms: unregistered first
};

}  // namespace sluice::engine
