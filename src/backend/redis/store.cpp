// Store (sluice/backend/redis/store.hpp): batching per loop turn and slot, the denial cache
// and leasing (the failure policies behind the breaker: store_failure.cpp).
#include "sluice/backend/redis/store.hpp"

#include <boost/asio/post.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>

#include "sluice/backend/redis/key_slot.hpp"
#include "sluice/backend/redis/script.hpp"
#include "sluice/clock/clocks.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/local/combined_decision.hpp"
#include "store_parts.hpp"

namespace sluice::backend::redis {

std::string_view source_name(Source s) {
  switch (s) {
    case Source::kRedis:
      return "redis";
    case Source::kLease:
      return "lease";
    case Source::kFailOpen:
      return "fail_open";
    case Source::kFailClosed:
      return "fail_closed";
    case Source::kLocal:
      return "local";
    case Source::kDenialCache:
      return "denial_cache";
  }
  return "?";
}

// A denial Redis answered for one key: until `until`, an ask of at least `cost` would be
// refused too, since what others do to the key only takes more (concurrency aside, which is
// never kept). Holds while its limit lives (the weak pointer keeps the control block, so a
// new limit at the old address is told apart) and no reset of that limit came since.
struct Store::Denial {
  std::weak_ptr<const RemoteLimit> limit;
  std::uint64_t resets = 0;
  std::int64_t cost = 1;
  core::Nanos decided = 0;  // local time at or before the script decided
  core::Nanos until = 0;
  core::Decision decision;
};

namespace {

constexpr std::size_t kPoolSweepAt = 1 << 16;
// Finished jobs kept for reuse: about what a loop has in flight at once.
constexpr std::size_t kFinishedKept = 1024;

bool is_concurrency(const RemoteLimit& l) { return l.spec().algorithm == "concurrency"; }

// A limit that blocks keys and lists them (block_list.hpp).
bool listed(const RemoteLimit& l) {
  return l.options().block > 0 && !l.options().block_list.empty();
}

// One item decided here from the pool's permits: a leased rule's ask without a max-wait.
bool leased_ask(const Query& q) {
  return q.items.size() == 1 && q.items[0].limit->options().lease > 0 && q.items[0].max_wait == 0 &&
         q.cost > 0;
}

// An answer's decision from its items', all or none.
core::Decision all_must_pass(std::span<const core::Decision> each) {
  local::AllMustPass fold;
  for (const auto& d : each) fold.add(d);
  return fold.result();
}

}  // namespace

namespace {
StoreOptions with_clock(StoreOptions o) {
  if (o.client.clock == nullptr) o.client.clock = &clock::steady_clock();
  return o;
}
}  // namespace

Store::Store(boost::asio::io_context& io, StoreOptions options)
    : io_(io),
      options_(with_clock(std::move(options))),
      client_(std::make_unique<Client>(io, options_.client)),
      retire_timer_(io),
      stats_timer_(io),
      script_{std::string(script_text())},
      breaker_(options_.breaker),
      renew_timer_(io),
      alive_(std::make_shared<bool>(true)) {
  arm_stats();
}

void Store::arm_stats() {
  stats_timer_.expires_after(std::chrono::seconds(1));
  stats_timer_.async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
        if (ec || alive.expired()) return;
        publish_stats();
        arm_stats();
      });
}

Store::~Store() { *alive_ = false; }

bool Store::reconfigure(const StoreOptions& given) {
  const StoreOptions options = with_clock(given);
  options_.cache_denials = options.cache_denials;
  options_.on_failure = options.on_failure;  // the rules' policies move with the rules
  if (options_.cache_denials == 0) denials_.clear();
  if (options.client == options_.client) return false;
  // The old client keeps its own options (its deadlines); the batching options move at once.
  const core::Nanos drain = options_.client.timeout + options_.client.connect_timeout;
  retired_.push_back(std::move(client_));
  options_ = options;
  client_ = std::make_unique<Client>(io_, options_.client);
  breaker_.success();
  stats_.reconfigures.fetch_add(1, std::memory_order_relaxed);
  // Every command of the old client has a deadline within `drain` of now: past it, nothing
  // waits on it but replies that will never be read.
  retire_timer_.expires_after(std::chrono::nanoseconds(2 * drain));
  retire_timer_.async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
        if (ec || alive.expired()) return;
        retire_clients();
      });
  publish_stats();
  return true;
}

void Store::retire_clients() {
  auto retired = std::move(retired_);
  retired_.clear();
  for (auto& c : retired) {
    c->close();  // fails what is left by policy (a callback may decide again: the new client)
    const Client::Stats& s = c->stats();
    closed_stats_.timeouts += s.timeouts;
    closed_stats_.reconnects += s.reconnects;
    closed_stats_.moved += s.moved;
    closed_stats_.ask += s.ask;
    closed_stats_.script_loads += s.script_loads;
    closed_stats_.refused_connects += s.refused_connects;
    closed_stats_.tls_failures += s.tls_failures;
    closed_stats_.master_switches += s.master_switches;
  }
  publish_stats();
}

void Store::schedule_flush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  boost::asio::post(io_, [this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    flush_scheduled_ = false;
    flush();
  });
}

std::shared_ptr<Store::Job> Store::new_job() {
  // The last finished is the likeliest free: a script call's parts let go of all its jobs at once.
  if (finished_.empty() || finished_.back().use_count() != 1) return std::make_shared<Job>();
  std::shared_ptr<Job> job = std::move(finished_.back());
  finished_.pop_back();
  job->done.reset();
  job->each.clear();
  job->parts_left = 0;
  job->source = Source::kRedis;
  job->leases.clear();
  job->seen = false;
  job->settlement = false;
  return job;
}

void Store::decide(Query query, Answered done) {
  auto job = new_job();
  job->query = std::move(query);
  job->done = std::move(done);
  start(job);
}

void Store::settle(QueryItem item, std::int64_t delta, std::function<void(bool)> done) {
  auto job = new_job();
  job->query.items.clear();
  job->query.items.push_back(std::move(item));
  job->query.cost = delta;
  job->query.kind = RequestKind::kSettle;
  job->done = [done = std::move(done)](Answer a) { done(a.source == Source::kRedis); };
  job->settlement = true;
  start(job);
}

const std::string& Store::key_of(const QueryItem& item) {
  item.limit->state_key_into(key_, item.key);
  return key_;
}

void Store::send_whole(const std::shared_ptr<Job>& job, std::int64_t cost, core::Nanos max_wait) {
  const QueryItem& item = job->query.items.front();
  Part part;
  part.job = job;
  part.items = {0};
  part.kind = job->query.kind;
  part.cost = cost;
  part.max_wait = max_wait;
  part.slot = options_.client.url.cluster ? key_slot(key_of(item)) : 0;
  job->parts_left = 1;
  pending_.push_back(std::move(part));
  schedule_flush();
}

void Store::start(const std::shared_ptr<Job>& job) {
  const auto& items = job->query.items;
  job->each.resize(items.size());
  if (redis_only(job->query.kind)) {
    if (items.size() != 1) {
      std::fill(job->each.begin(), job->each.end(), core::overflowed());
      job->source = Source::kFailClosed;
      finish(job);
      return;
    }
    if (forgets(job->query.kind)) items[0].limit->count_reset();
    send_whole(job, job->query.kind == RequestKind::kSettle ? job->query.cost : 0, 0);
    return;
  }
  // Cost 0 is CL.THROTTLE's quantity 0 (redis-cell's peek): decided by the script, never leased.
  if (items.empty() || job->query.cost < 0 || job->query.cost >= kScriptExact) {
    // Nothing to ask, or a cost the script cannot carry exactly: answered here.
    if (!items.empty()) std::fill(job->each.begin(), job->each.end(), core::overflowed());
    finish(job);
    return;
  }
  if (!denials_.empty() && answer_cached_denial(job, options_.client.clock->now())) return;
  if (leased_ask(job->query)) {
    decide_leased(job);
    return;
  }
  if (items.size() == 1) {  // the common case: one rule kept in Redis
    send_whole(job, job->query.cost, items[0].max_wait);
    return;
  }
  // Items that share a slot and a max-wait go as one script request (decided all-or-none);
  // items in different cluster slots cannot share a script and are decided separately.
  std::map<std::pair<std::uint16_t, core::Nanos>, std::vector<int>> groups;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::uint16_t slot = options_.client.url.cluster ? key_slot(key_of(items[i])) : 0;
    groups[{slot, items[i].max_wait}].push_back(static_cast<int>(i));
  }
  job->parts_left = static_cast<int>(groups.size());
  for (auto& [where, indexes] : groups) {
    Part part;
    part.job = job;
    part.items.assign(indexes.begin(), indexes.end());
    part.cost = job->query.cost;
    part.max_wait = where.second;
    part.slot = where.first;
    pending_.push_back(std::move(part));
  }
  schedule_flush();
}

bool Store::cached_denial(const Query& query, core::Nanos now, core::Decision& out) {
  const auto& items = query.items;
  if (items.size() != 1 || items[0].max_wait != 0) return false;
  const QueryItem& item = items[0];
  const auto it = denials_.find(key_of(item));
  if (it == denials_.end()) return false;
  const Denial& d = it->second;
  const bool same_limit =
      !d.limit.owner_before(item.limit) && !item.limit.owner_before(d.limit) && !d.limit.expired();
  if (!same_limit || d.resets != item.limit->resets() || now >= d.until) {
    denials_.erase(it);
    return false;
  }
  if (item.cost_in(query.cost) < d.cost) return false;  // a smaller ask may fit earlier
  out = d.decision;
  const core::Nanos elapsed = now - d.decided;
  out.retry_after = std::max<core::Nanos>(1, d.decision.retry_after - elapsed);
  out.reset_after = std::max<core::Nanos>(0, d.decision.reset_after - elapsed);
  return true;
}

bool Store::answer_cached_denial(const std::shared_ptr<Job>& job, core::Nanos now) {
  if (!cached_denial(job->query, now, job->each[0])) return false;
  job->source = Source::kDenialCache;
  finish(job);
  return true;
}

bool Store::answer_now(const Query& query, Answer& out) {
  // What start() answers at once, and only that: the same tests in the same order.
  const auto& items = query.items;
  if (redis_only(query.kind) || items.size() != 1 || items[0].max_wait != 0 || query.cost <= 0 ||
      query.cost >= kScriptExact) {
    return false;
  }
  const core::Nanos now = options_.client.clock->now();
  core::Decision d;
  if (!denials_.empty() && cached_denial(query, now, d)) {
    out.source = Source::kDenialCache;
  } else {
    if (!leased_ask(query) || pools_.empty()) return false;
    const auto it = pools_.find(key_of(items[0]));
    if (it == pools_.end()) return false;
    Pool& pool = it->second;
    // Whoever waits on the pool is served first (decide() queues behind them).
    if (!pool.waiting.empty() || !pool.can_give(query.cost, now)) return false;
    d = pool.give(query.cost);
    out.source = Source::kLease;
  }
  out.each.assign(1, d);
  out.combined = all_must_pass(out.each);
  out.leases.clear();
  out.seen = false;
  stats_.by_source[static_cast<int>(out.source)].fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Store::keep_denial(const QueryItem& item, std::int64_t cost, const core::Decision& d,
                        core::Nanos sent) {
  if (options_.cache_denials <= 0 || d.allowed || d.overflow || d.retry_after <= 0 ||
      d.retry_after == core::kNever || is_concurrency(*item.limit) ||
      item.limit->options().count_denied) {  // each refusal must reach Redis to be charged
    return;
  }
  if (denials_.size() >= options_.max_cached_denials) {
    std::erase_if(denials_, [&](const auto& kv) { return kv.second.until <= sent; });
    if (denials_.size() >= options_.max_cached_denials) return;
  }
  Denial& kept = denials_[key_of(item)];
  const core::Nanos hold = std::min(d.retry_after, options_.cache_denials);
  kept = Denial{item.limit, item.limit->resets(), cost, sent, sent + hold, d};
}

void Store::flush() {
  std::vector<Part> parts = std::move(pending_);
  pending_.clear();
  // The next turn's parts are about as many: room for them at once, not doubling into it.
  pending_.reserve(parts.size());
  // Calls of at most max_batch requests, each to one slot's node.
  auto in_batches = [this](std::vector<Part>& list) {
    if (list.size() <= options_.max_batch) {  // the common case: one call, the list as it is
      send(std::move(list));
      return;
    }
    for (std::size_t at = 0; at < list.size(); at += options_.max_batch) {
      const std::size_t end = std::min(list.size(), at + options_.max_batch);
      send(std::vector<Part>(std::make_move_iterator(list.begin() + static_cast<long>(at)),
                             std::make_move_iterator(list.begin() + static_cast<long>(end))));
    }
  };
  if (!options_.client.url.cluster) {  // one node: no slots to group by
    in_batches(parts);
    return;
  }
  std::map<std::uint16_t, std::vector<Part>> by_slot;
  for (auto& p : parts) by_slot[p.slot].push_back(std::move(p));
  for (auto& [slot, list] : by_slot) in_batches(list);
}

void Store::send(std::vector<Part> parts) {
  const core::Nanos now = options_.client.clock->now();
  const bool allowed = breaker_.allow(now);
  publish_stats();
  if (!allowed) {
    for (const auto& p : parts) fail_part(p, now);
    return;
  }
  ScriptBatch& batch = batch_;
  batch.reset(ScriptTime{});
  // Each limit is listed once; an RLS request may reach thousands of them in one part. A rule's
  // reserve is its own definition (flag r), beside the plain one a report or check uses, and a
  // calendar window is listed once per window its asks were made in (its bounds differ).
  std::unordered_map<const RemoteLimit*, int> limit_index;
  std::map<std::tuple<const RemoteLimit*, std::int64_t, std::int64_t>, int> variant_index;
  auto index_of = [&](const QueryItem& item, std::int64_t reserve = 0) {
    const RemoteLimit& l = *item.limit;
    const core::Calendar* calendar = l.calendar();
    if (reserve > 0 || calendar != nullptr) {
      std::optional<CalendarBounds> bounds;
      if (calendar != nullptr) bounds = calendar_bounds(*calendar, item.unix_now);
      const auto [it, added] =
          variant_index.try_emplace({&l, reserve, bounds ? (*bounds)[1] : 0}, 0);
      if (added) {
        ScriptLimit s = bounds ? with_calendar_bounds(l.script(), *bounds) : l.script();
        s.cost = reserve;
        it->second = batch.add_limit(s);
      }
      return it->second;
    }
    const auto [it, added] = limit_index.try_emplace(&l, 0);
    if (added) it->second = batch.add_limit(l.script());
    return it->second;
  };
  std::vector<std::pair<int, int>>& refs = refs_;
  for (const auto& p : parts) {
    refs.clear();
    if (p.job) {
      for (int i : p.items) {
        const QueryItem& item = p.job->query.items[static_cast<std::size_t>(i)];
        refs.emplace_back(index_of(item, item.cost), batch.add_key(key_of(item)));
      }
    } else {
      refs.emplace_back(index_of(p.target), batch.add_key(key_of(p.target)));
    }
    batch.add_request(p.kind, p.cost, p.max_wait, refs);
  }
  stats_.scripts.fetch_add(1, std::memory_order_relaxed);
  stats_.scripted_requests.fetch_add(parts.size(), std::memory_order_relaxed);
  std::size_t limits = 0;
  for (int n : batch.limits_per_request()) limits += static_cast<std::size_t>(n);
  const std::string_view routing = batch.key_count() == 0 ? "" : batch.key(0);
  client_->eval(script_, routing, batch.key_count(), batch.wire(),
                [this, alive = std::weak_ptr<bool>(alive_), parts = std::move(parts), limits,
                 now](Outcome outcome) {
                  if (!alive.expired()) answered(parts, limits, outcome, now);
                });
}

void Store::answered(const std::vector<Part>& parts, std::size_t limits, const Outcome& outcome,
                     core::Nanos sent) {
  const core::Nanos at = options_.client.clock->now();
  const auto* failure = std::get_if<Failure>(&outcome);
  const bool connection_down = failure != nullptr && failure->kind == Failure::Kind::kConnection;
  auto decoded = decode_limits(outcome, limits);
  if (!decoded) {
    stats_.failures.fetch_add(1, std::memory_order_relaxed);
    breaker_.failure(at, connection_down);
    publish_stats();
    for (const auto& p : parts) fail_part(p, at);
    return;
  }
  breaker_.success();
  publish_stats();
  const std::vector<LimitAnswer>& answers = *decoded;
  std::size_t first = 0;  // parts[k]'s first answer
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Part& p = parts[k];
    const LimitAnswer* a = &answers[first];
    first += p.job ? p.items.size() : 1;
    if (p.kind == RequestKind::kRelease) continue;
    if (p.kind == RequestKind::kRenew) {
      (a[0].extra != 0 ? stats_.renewals : stats_.renewals_lost)
          .fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (p.kind == RequestKind::kTake) {
      take_answered(p, a[0], at);
      continue;
    }
    for (std::size_t j = 0; j < p.items.size(); ++j) {
      const auto idx = static_cast<std::size_t>(p.items[j]);
      const QueryItem& item = p.job->query.items[idx];
      p.job->each[idx] = a[j].decision;
      if (redis_only(p.kind)) {
        p.job->seen = a[j].extra != 0;
        // A refusal a loop kept from before the reset, or kept while it was on its way, is
        // forgotten (every loop's, through the limit's count).
        if (forgets(p.kind)) item.limit->count_reset();
        // A refund lets the key through sooner than this loop's kept refusal says (the other
        // loops' hold theirs at most cache_denials).
        if (p.kind == RequestKind::kSettle && p.cost < 0) {
          denials_.erase(key_of(item));
        }
        if (p.kind == RequestKind::kUnblock && listed(*item.limit)) unlist_block(item);
        continue;
      }
      // A refusal that started the key's block: `extra` is when it ends.
      if (a[j].extra > 0 && !a[j].decision.allowed && listed(*item.limit)) {
        list_block(item, a[j].extra);
      }
      if (p.items.size() == 1 && p.max_wait == 0) {
        keep_denial(item, item.cost_in(p.cost), a[j].decision, sent);
      }
      if (is_concurrency(*item.limit) && a[j].decision.allowed) {
        p.job->leases.push_back(RemoteLease{item.limit, item.key, a[j].extra});
      }
    }
    if (--p.job->parts_left == 0) finish(p.job);
  }
}

void Store::take_answered(const Part& p, const LimitAnswer& a, core::Nanos at) {
  auto it = pools_.find(key_of(p.target));
  if (it == pools_.end()) return;
  Pool& pool = it->second;
  pool.taking = false;
  if (pool.expires <= at) pool.permits = 0;
  pool.permits += a.extra;
  pool.expires = at + p.target.limit->options().lease_ttl;
  const bool redis_had_enough = a.extra >= p.cost;
  // Had Redis enough, who still waits gets another take; if it ran short, they are denied
  // with its answer, at once (a second take would only be refused too).
  serve_pool(it->first, pool, at, redis_had_enough);
  if (redis_had_enough) return;
  core::Decision d = a.decision;
  d.allowed = false;
  d.delay = 0;
  if (d.retry_after == 0) d.retry_after = core::kNanosPerMilli;
  while (!pool.waiting.empty()) {
    auto job = std::move(pool.waiting.front());
    pool.waiting.pop_front();
    job->each[0] = d;
    finish(job);
  }
}

void Store::decide_leased(const std::shared_ptr<Job>& job) {
  const core::Nanos now = options_.client.clock->now();
  if (pools_.size() >= kPoolSweepAt) {
    std::erase_if(pools_, [&](const auto& kv) {
      return !kv.second.taking && kv.second.waiting.empty() && kv.second.expires <= now;
    });
  }
  const QueryItem& item = job->query.items[0];
  auto [it, inserted] = pools_.try_emplace(key_of(item));
  Pool& pool = it->second;
  if (pool.expires <= now) pool.permits = 0;
  pool.waiting.push_back(job);
  serve_pool(it->first, pool, now);
}

// Serves waiting jobs in order from the pool's permits; when it runs dry with jobs still
// waiting, takes another batch from Redis (one take in flight per key).
void Store::serve_pool(const std::string& state_key, Pool& pool, core::Nanos now, bool take_more) {
  while (!pool.waiting.empty() && pool.can_give(pool.waiting.front()->query.cost, now)) {
    auto job = std::move(pool.waiting.front());
    pool.waiting.pop_front();
    job->each[0] = pool.give(job->query.cost);
    job->source = Source::kLease;
    finish(job);
  }
  if (pool.waiting.empty() || pool.taking || !take_more) return;
  const QueryItem& item = pool.waiting.front()->query.items[0];
  pool.taking = true;
  stats_.takes.fetch_add(1, std::memory_order_relaxed);
  Part part;
  part.kind = RequestKind::kTake;
  part.cost = std::max(item.limit->options().lease, pool.waiting.front()->query.cost);
  part.target = item;  // a calendar window's time of the ask too
  part.target.max_wait = 0;
  part.slot = options_.client.url.cluster ? key_slot(state_key) : 0;
  pending_.push_back(std::move(part));
  schedule_flush();
}

void Store::publish_stats() {
  log_breaker_change(options_.client.clock->now());
  stats_.breaker_state.store(static_cast<int>(breaker_.state()), std::memory_order_relaxed);
  stats_.breaker_opens.store(breaker_.opens(), std::memory_order_relaxed);
  Client::Stats c = closed_stats_;
  const auto add = [&c](const Client::Stats& s) {
    c.timeouts += s.timeouts;
    c.reconnects += s.reconnects;
    c.moved += s.moved;
    c.ask += s.ask;
    c.script_loads += s.script_loads;
    c.refused_connects += s.refused_connects;
    c.tls_failures += s.tls_failures;
    c.master_switches += s.master_switches;
  };
  add(client_->stats());
  for (const auto& r : retired_) add(r->stats());
  stats_.client_timeouts.store(c.timeouts, std::memory_order_relaxed);
  stats_.client_reconnects.store(c.reconnects, std::memory_order_relaxed);
  stats_.client_moved.store(c.moved, std::memory_order_relaxed);
  stats_.client_ask.store(c.ask, std::memory_order_relaxed);
  stats_.client_script_loads.store(c.script_loads, std::memory_order_relaxed);
  stats_.client_refused_connects.store(c.refused_connects, std::memory_order_relaxed);
  stats_.client_tls_failures.store(c.tls_failures, std::memory_order_relaxed);
  stats_.client_master_switches.store(c.master_switches, std::memory_order_relaxed);
  stats_.connected.store(client_->connected() ? 1 : 0, std::memory_order_relaxed);
}

void Store::finish(const std::shared_ptr<Job>& job) {
  Answer answer;
  answer.combined = all_must_pass(job->each);
  answer.each = std::move(job->each);
  answer.source = job->source;
  answer.leases = std::move(job->leases);
  answer.seen = job->seen;
  if (!answer.combined.allowed) {
    // A permit taken in one slot while another slot denied: give it back.
    for (const auto& lease : answer.leases) release(lease);
    answer.leases.clear();
  }
  // A settlement is not a decision: counted by the rule it settles (sluice_rule_settlements_*).
  if (job->query.kind != RequestKind::kSettle) {
    stats_.by_source[static_cast<int>(job->source)].fetch_add(1, std::memory_order_relaxed);
  }
  // Never inside decide(): the caller may still be setting up what the callback resumes.
  deliveries_.push_back(Delivery{std::move(job->done), std::move(answer)});
  if (!delivery_scheduled_) {
    delivery_scheduled_ = true;
    boost::asio::post(io_, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) deliver();
    });
  }
  if (finished_.size() < kFinishedKept) {
    job->query.items.clear();  // its limits are not kept alive by a job no one waits on
    finished_.push_back(job);
  }
}

void Store::deliver() {
  delivery_scheduled_ = false;
  // A callback may decide again: what that answers goes to the next delivery.
  std::swap(delivering_, deliveries_);
  for (Delivery& d : delivering_) d.done(std::move(d.answer));
  delivering_.clear();
}

}  // namespace sluice::backend::redis
