// The Redis backend as an event loop sees it: decisions submitted during one loop turn go to
// Redis together (one EVALSHA per slot), leased permits are spent without a round trip, and
// when Redis fails each limit's failure policy answers at once.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sluice/backend/redis/breaker.hpp"
#include "sluice/backend/redis/client.hpp"
#include "sluice/backend/redis/query.hpp"
#include "sluice/backend/redis/remote_limit.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/core/inline_function.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::backend::redis {

struct LimitAnswer;  // script_codec.hpp

struct StoreOptions {
  ClientOptions client;
  Breaker::Options breaker;
  // Requests per EVALSHA. Smaller batches let Redis run one while the loop prepares the next
  // (store_bench: 64 gave 1.24x the decisions/s of 256 on one loop).
  std::size_t max_batch = 64;
  // Denials Redis answered are kept (a key refused until T is refused here until T without a
  // round trip, or for at most cache_denials), at most this many keys per store; 0: none kept.
  core::Nanos cache_denials = core::kNanosPerSecond;
  std::size_t max_cached_denials = 1 << 16;
  // The failure policies in force, as the server log's breaker lines name them: one name when
  // every rule kept in Redis has it ("fail-closed"), else each with its rules
  // ("fail-closed: login; fail-open: api, search"). The engine writes it from the rules.
  std::string on_failure = "fail-open";
};

// One per event loop; not thread-safe. Callbacks run on the loop, exactly once, never inside
// decide() itself.
class Store {
 public:
  Store(boost::asio::io_context& io, StoreOptions options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The callback, move-only: held in place up to kAnsweredBytes (Loop's, with the coroutine it
  // resumes, is), so a decision allocates none for it.
  static constexpr std::size_t kAnsweredBytes = 64;
  using Answered = core::InlineFunction<void(Answer), kAnsweredBytes>;
  void decide(Query query, Answered done);
  // The answer to `query` without waiting, when the store has it at hand: a denial it keeps for
  // the key, or a leased permit from a live pool no earlier ask waits on (one item, no
  // max-wait). Then `out` is what decide() would have answered (counted alike) and true; false:
  // nothing changed, decide() it. `out`'s buffers are reused, so a caller that keeps one
  // allocates nothing per answer.
  bool answer_now(const Query& query, Answer& out);
  // Settles `delta` more on `item`'s key in Redis (a cost known after the response: a negative
  // delta gives part of a reserve back), in the background: `done(true)` once Redis applied it,
  // `done(false)` when it did not (down, slow, the breaker open): the settlement is lost, and
  // a line a second per rule says so in the server log.
  void settle(QueryItem item, std::int64_t delta, std::function<void(bool)> done);

  // The config's `redis:` changed (a reload): when the client's settings differ (where Redis
  // is, AUTH, TLS, timeouts), later decisions go to a new client made with them, while what is
  // in flight completes on the old one, or fails by its rule's policy within the old timeout;
  // the old client is then closed. The breaker starts closed. False: nothing changed.
  bool reconfigure(const StoreOptions& options);
  // Gives a concurrency permit back (fire and forget: a failure leaves it to expire), and stops
  // renewing it.
  void release(const RemoteLease& lease);
  // Keeps a concurrency permit a running request holds alive in Redis while `holder` lives:
  // renewed every third of its concurrency_lease_ttl, so a request may run longer than the
  // TTL, and a crashed instance's permits still return within one TTL. A holder gone without a
  // release (a dropped outcome) has its permit released at the next renewal.
  void hold(const RemoteLease& lease, std::weak_ptr<const void> holder);
  // One plain command on this loop's client, outside batching and failure policies (the
  // instances' heartbeats); `routing_key` picks the cluster slot.
  void command(std::vector<std::string> args, const std::string& routing_key, Callback done);

  // Written by the loop, read by the metrics writer on another thread.
  struct Stats {
    std::atomic<std::uint64_t> by_source[kSources] = {};  // answers, indexed by Source
    std::atomic<std::uint64_t> scripts{0};                // EVALSHA calls
    std::atomic<std::uint64_t> scripted_requests{0};
    std::atomic<std::uint64_t> takes{0};  // leasing round trips
    std::atomic<std::uint64_t> failures{0};
    std::atomic<std::uint64_t> breaker_opens{0};
    std::atomic<int> breaker_state{0};  // Breaker::State
    // The client's own counters, mirrored after each script call (the client is loop-only).
    std::atomic<std::uint64_t> client_timeouts{0};
    std::atomic<std::uint64_t> client_reconnects{0};
    std::atomic<std::uint64_t> client_moved{0};
    std::atomic<std::uint64_t> client_ask{0};
    std::atomic<std::uint64_t> client_script_loads{0};
    std::atomic<std::uint64_t> client_refused_connects{0};
    std::atomic<std::uint64_t> client_tls_failures{0};
    std::atomic<std::uint64_t> client_master_switches{0};
    std::atomic<std::uint64_t> reconfigures{0};   // clients replaced by a reload
    std::atomic<std::uint64_t> renewals{0};       // concurrency leases renewed
    std::atomic<std::uint64_t> renewals_lost{0};  // renewals that found the lease gone
    std::atomic<std::int64_t> held{0};            // permits being renewed
    std::atomic<int> connected{0};                // 1 while the client has a live connection
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Job;
  struct Part;
  struct Pool;
  struct Batch;
  struct Denial;
  struct Held;

  // A job for decide() or settle(): one finished before that nothing holds any more (its
  // buffers' room reused), or a new one.
  std::shared_ptr<Job> new_job();
  // A job of decide() or settle() on its way: answered here, leased, or into the next flush.
  void start(const std::shared_ptr<Job>& job);
  // The job's one item as one script request of the job's kind.
  void send_whole(const std::shared_ptr<Job>& job, std::int64_t cost, core::Nanos max_wait);
  // A denial kept for this ask's key that still holds: answered from it, without Redis.
  bool answer_cached_denial(const std::shared_ptr<Job>& job, core::Nanos now);
  // The kept denial for `query`'s one item that still holds at `now`, if any (a stale one is
  // dropped); `out` is its decision as of now.
  bool cached_denial(const Query& query, core::Nanos now, core::Decision& out);
  // Keeps a denial Redis answered at `sent` (the script decided after that) for its key.
  void keep_denial(const QueryItem& item, std::int64_t cost, const core::Decision& d,
                   core::Nanos sent);
  void schedule_flush();
  void flush();
  void send(std::vector<Part> parts);
  // Redis's answer to one send: each part's decisions to its job, or the failure policy.
  void answered(const std::vector<Part>& parts, std::size_t limits, const Outcome& outcome,
                core::Nanos sent);
  // A lease take answered: the permits into its pool, the requests waiting on it served.
  void take_answered(const Part& p, const LimitAnswer& a, core::Nanos at);
  void decide_leased(const std::shared_ptr<Job>& job);
  void serve_pool(const std::string& state_key, Pool& pool, core::Nanos now, bool take_more = true);
  void fail_part(const Part& part, core::Nanos now);
  // The job's answer, to its callback at the next delivery (never inside decide()).
  void finish(const std::shared_ptr<Job>& job);
  // Runs the callbacks of the answers made since the last delivery, in order.
  void deliver();
  core::Decision on_failure(const QueryItem& item, std::int64_t cost, core::Nanos now,
                            Source& source);
  void publish_stats();   // the breaker and the client counters, for the metrics thread
  void retire_clients();  // closes the clients a reconfigure replaced
  void arm_stats();       // publishes every second, so a refused connect shows without traffic
  // Renewal (store_renewal.cpp): a release or renew request for one lease, the next renewal
  // wake-up, and what is due at it.
  Part lease_part(RequestKind kind, const RemoteLease& lease) const;
  void arm_renewal(core::Nanos at);
  void renew_due();
  // A rule's list of blocks (store_blocks.cpp): the key whose block the script started (ending
  // at `ends_ms`, Unix ms) added, the key whose block it lifted taken off.
  void list_block(const QueryItem& item, std::int64_t ends_ms);
  void unlist_block(const QueryItem& item);

  boost::asio::io_context& io_;
  StoreOptions options_;
  std::unique_ptr<Client> client_;
  // Replaced by reconfigure(), finishing what they carry; and the counts of those closed, so the
  // published counters never go down.
  std::vector<std::unique_ptr<Client>> retired_;
  Client::Stats closed_stats_;
  boost::asio::steady_timer retire_timer_;
  boost::asio::steady_timer stats_timer_;
  Script script_;
  ScriptBatch batch_{ScriptTime{}};  // reset for each call: its buffers are reused
  // A state key is written here to look it up, route it or add it to a batch: no string of its
  // own per decision. key_of() fills it; valid until the next call.
  std::string key_;
  std::vector<std::pair<int, int>> refs_;  // send()'s, per part: reused
  const std::string& key_of(const QueryItem& item);
  Breaker breaker_;
  std::vector<Part> pending_;
  // Jobs finished, for new_job() once the parts of their script call let them go.
  std::vector<std::shared_ptr<Job>> finished_;
  bool flush_scheduled_ = false;
  // Answers waiting for their callbacks: one post per loop turn, not one per answer.
  struct Delivery {
    Answered done;
    Answer answer;
  };
  std::vector<Delivery> deliveries_;
  std::vector<Delivery> delivering_;  // deliver()'s, its room reused
  bool delivery_scheduled_ = false;
  std::unordered_map<std::string, Pool> pools_;
  std::unordered_map<std::string, Denial> denials_;  // by state key
  std::unordered_map<std::string, Held> held_;       // by state key and lease id
  boost::asio::steady_timer renew_timer_;
  core::Nanos renew_at_ = 0;  // when renew_timer_ fires; 0: not armed
  Stats stats_;
  std::shared_ptr<bool> alive_;
  // The breaker state the server log last reported, and when: a line per change, at most one
  // a second (a flapping Redis converges to its latest state a second later).
  Breaker::State logged_state_ = Breaker::State::kClosed;
  core::Nanos logged_at_ = 0;
  bool logged_once_ = false;
  void log_breaker_change(core::Nanos now);
  // Events per rule, logged as a count at most once a second per rule.
  struct Tally {
    std::int64_t count = 0;
    core::Nanos logged_at = 0;
    bool logged = false;
    // One more; the count to log when a line is due (the first, then a second after the last).
    std::int64_t note(core::Nanos now) {
      ++count;
      if (logged && now - logged_at < core::kNanosPerSecond) return 0;
      const std::int64_t n = count;
      *this = Tally{0, now, true};
      return n;
    }
  };
  std::unordered_map<std::string, Tally> fail_open_;  // admissions fail-open let through
  std::unordered_map<std::string, Tally> lost_;       // settlements that did not reach Redis
  void log_fail_open(const std::string& rule, core::Nanos now);
  void log_lost_settlement(const std::string& rule, core::Nanos now);
};

// The failure policy's answer for one item: allow, deny (with `retry_after`), or the local
// fallback limiter's decision; `source` records which (the first that is not Redis).
core::Decision decide_on_failure(const QueryItem& item, std::int64_t cost, core::Nanos now,
                                 core::Nanos retry_after, Source& source);

// A query that no store can take (a frontend whose loop has none: a redis url added to the
// config after start) is answered by each rule's failure policy, never by a silent default.
Answer answer_without_store(const Query& query, core::Nanos now);

// One loop's store in the metrics registry (which sums the loops): answers by source, script
// calls, leasing takes, failures, the breaker, and the client's own counters.
void collect_store_metrics(metrics::Sink& sink, const Store& store);

}  // namespace sluice::backend::redis
