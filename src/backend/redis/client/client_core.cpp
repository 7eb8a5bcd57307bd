// ClientCore (client_core.hpp).
#include "client_core.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>

#include "command_encoding.hpp"
#include "sluice/backend/redis/key_slot.hpp"
#include "sluice/clock/clocks.hpp"
#include "sluice/core/clock.hpp"

namespace sluice::backend::redis::detail {

namespace {

namespace asio = boost::asio;

// Past this many MOVED/ASK hops the map is churning or the nodes disagree: give up.
constexpr std::uint8_t kMaxRedirects = 5;
// NOSCRIPT is answered by SCRIPT LOAD and a retry this many times per call (a second time covers
// a redirect to another node that lacks the script too).
constexpr std::uint8_t kMaxReloads = 2;
// TRYAGAIN (keys of a migrating slot split across nodes) and CLUSTERDOWN (a failover) clear in
// milliseconds; retry at this pace until the deadline.
constexpr core::Nanos kRetryDelay = 5 * core::kNanosPerMilli;

constexpr core::Nanos kLogEvery = 10 * core::kNanosPerSecond;

// The opening of a connection: AUTH (or a PING, so that a server wanting AUTH says so now),
// then SELECT and, for a master found through the sentinels, ROLE.
std::vector<Opening> opening(const StoreAuth& auth, std::int64_t db, bool check_master) {
  std::vector<Opening> out;
  if (auth.password.empty()) {
    out.push_back({{"PING"}, Opening::Expect::kOk});
  } else if (auth.user.empty()) {
    out.push_back({{"AUTH", auth.password}, Opening::Expect::kOk});
  } else {
    out.push_back({{"AUTH", auth.user, auth.password}, Opening::Expect::kOk});
  }
  if (db != 0) out.push_back({{"SELECT", std::to_string(db)}, Opening::Expect::kOk});
  if (check_master) out.push_back({{"ROLE"}, Opening::Expect::kMaster});
  return out;
}

ConnectionOptions connection_options(const ClientOptions& o) {
  ConnectionOptions c;
  c.clock = o.clock != nullptr ? o.clock : &clock::steady_clock();
  c.timeout = std::max<core::Nanos>(o.timeout, 1);
  c.connect_timeout = std::max<core::Nanos>(o.connect_timeout, 1);
  // A zero backoff would spin on a dead server.
  c.reconnect_min = std::max(o.reconnect_min, core::kNanosPerMilli);
  c.reconnect_max = std::max(o.reconnect_max, c.reconnect_min);
  c.max_pending = std::max<std::size_t>(o.max_pending, 1);
  if (o.url.tls.enabled) c.tls = make_tls_setup(o.url.tls);
  c.opening = opening(o.url.auth, o.url.db, o.url.sentinel);
  return c;
}

// The sentinels' connections: their own AUTH, no database, TLS as the data nodes have it.
ConnectionOptions sentinel_options(const ClientOptions& o, const ConnectionOptions& data) {
  ConnectionOptions c = data;
  c.opening = opening(o.url.sentinel_auth, 0, false);
  return c;
}

bool refused_by_replica(std::string_view e) {
  return e.starts_with("READONLY") || e.starts_with("MASTERDOWN") ||
         e.find("READONLY You can't write") != std::string_view::npos;
}

}  // namespace

ClientCore::ClientCore(asio::io_context& io, ClientOptions options)
    : io_(io),
      options_(std::move(options)),
      connection_options_(connection_options(options_)),
      cluster_(options_.url.cluster),
      sentinel_(options_.url.sentinel),
      refresh_backoff_(connection_options_.reconnect_min),
      refresh_timer_(io),
      retry_timer_(io) {
  if (sentinel_) {
    // The master is where the sentinels say; nodes_ stays empty until one does.
    watch_ = std::make_unique<SentinelWatch>(
        io, options_.url.seeds, options_.url.master,
        sentinel_options(options_, connection_options_),
        [this](const Endpoint& at) { on_master(at); }, options_.log);
    watch_->start();
    return;
  }
  for (const auto& seed : options_.url.seeds) node_for(seed);
  if (nodes_.empty()) return;  // every command fails: nowhere to send it
  if (cluster_) {
    schedule_refresh();
  } else {
    connection(0).start();
  }
}

ClientCore::~ClientCore() {
  close();
  // Connections may outlive us inside pending handlers; they are closed, so they call nothing.
}

// ---- submitting ----

void ClientCore::command(std::vector<std::string> args, std::string_view routing_key, Callback cb) {
  submit(std::move(args), routing_key, std::move(cb));
}

void ClientCore::eval(const Script& script, std::vector<std::string> keys,
                      std::vector<std::string> args, Callback cb) {
  std::vector<std::string> full;
  full.reserve(3 + keys.size() + args.size());
  full.emplace_back("EVALSHA");
  full.push_back(script.sha1());
  full.push_back(std::to_string(keys.size()));
  const std::string routing = keys.empty() ? std::string() : keys.front();
  for (auto& k : keys) full.push_back(std::move(k));
  for (auto& a : args) full.push_back(std::move(a));
  auto request = std::make_unique<Request>();
  request->args = std::move(full);
  submit_script(script, std::move(request), routing, !keys.empty(), std::move(cb));
}

void ClientCore::eval(const Script& script, std::string_view routing_key, std::size_t key_count,
                      const WireArgs& tail, Callback cb) {
  auto request = std::make_unique<Request>();
  std::string& w = request->wire;
  w.reserve(tail.wire.size() + 96);
  append_header(w, '*', 3 + tail.count);
  append_bulk(w, "EVALSHA");
  append_bulk(w, script.sha1());
  append_bulk_integer(w, static_cast<std::int64_t>(key_count));
  w += tail.wire;
  request->compact = true;
  submit_script(script, std::move(request), routing_key, key_count > 0, std::move(cb));
}

void ClientCore::submit_script(const Script& script, RequestPtr request,
                               std::string_view routing_key, bool keyed, Callback cb) {
  if (scripts_.find(script.sha1()) == scripts_.end())
    scripts_.emplace(script.sha1(), script.text());
  request->evalsha = true;
  request->sha1 = script.sha1();
  // An EVALSHA without keys may run on any node.
  submit(std::move(request), routing_key, keyed, std::move(cb));
}

void ClientCore::submit(std::vector<std::string> args, std::string_view routing_key, Callback cb) {
  auto request = std::make_unique<Request>();
  request->args = std::move(args);
  if (request->args.empty()) {
    ++stats_.commands;
    request->done = std::move(cb);
    fail(std::move(request), Failure::Kind::kProtocol, "empty command", true);
    return;
  }
  // A keyless command may run on any node.
  submit(std::move(request), routing_key, !routing_key.empty(), std::move(cb));
}

void ClientCore::submit(RequestPtr request, std::string_view routing_key, bool routed,
                        Callback cb) {
  ++stats_.commands;
  request->done = std::move(cb);
  request->deadline = connection_options_.clock->now() + connection_options_.timeout;
  if (cluster_) {
    request->routed = routed;
    request->slot = key_slot(routing_key);
  }
  dispatch(std::move(request), true);
}

void ClientCore::dispatch(RequestPtr request, bool defer) {
  if (closed_) {
    fail(std::move(request), Failure::Kind::kConnection, "the Redis client was closed", defer);
    return;
  }
  if (connection_options_.clock->now() >= request->deadline) {
    fail(std::move(request), Failure::Kind::kTimeout,
         "no reply within " + core::format_duration(connection_options_.timeout), defer);
    return;
  }
  if (sentinel_ && nodes_.empty()) {
    wait_for_master(std::move(request), defer);
    return;
  }
  if (nodes_.empty()) {
    fail(std::move(request), Failure::Kind::kConnection, "no Redis server configured", defer);
    return;
  }
  const NodeId node = pick_node(*request);
  send_to(node, std::move(request), false, defer);
}

void ClientCore::send_to(NodeId node, RequestPtr request, bool asking, bool defer) {
  Connection& c = connection(node);
  switch (c.send(request, asking)) {
    case Connection::Admit::kQueued:
      return;
    case Connection::Admit::kDown:
      fail(std::move(request), Failure::Kind::kConnection,
           "not connected to Redis at " + c.name() + " (reconnecting)", defer);
      return;
    case Connection::Admit::kOverloaded:
      fail(std::move(request), Failure::Kind::kOverloaded,
           "Redis at " + c.name() + " already has " + std::to_string(c.pending()) +
               " commands waiting",
           defer);
      return;
  }
}

void ClientCore::finish(RequestPtr request, Outcome outcome, bool defer) {
  if (!request->internal) {
    if (const auto* f = std::get_if<Failure>(&outcome)) {
      ++stats_.failures;
      if (f->kind == Failure::Kind::kTimeout) ++stats_.timeouts;
    } else {
      ++stats_.replies;
    }
  }
  Callback cb = std::move(request->done);
  const bool internal = request->internal;
  request.reset();
  if (!cb) return;
  // Internal callbacks refer to this object, so they never outlive the call.
  if (defer && !internal) {
    asio::post(io_, [cb = std::move(cb), outcome = std::move(outcome)]() mutable {
      cb(std::move(outcome));
    });
    return;
  }
  cb(std::move(outcome));
}

void ClientCore::fail(RequestPtr request, Failure::Kind kind, std::string message, bool defer) {
  finish(std::move(request), Failure{kind, std::move(message)}, defer);
}

bool ClientCore::connected() const {
  return std::any_of(nodes_.begin(), nodes_.end(),
                     [](const Node& n) { return n.connection && n.connection->connected(); });
}

void ClientCore::close() {
  if (closed_) return;
  closed_ = true;
  *alive_ = false;
  refresh_timer_.cancel();
  retry_timer_.cancel();
  auto delayed = std::move(delayed_);
  delayed_.clear();
  for (auto& d : delayed) {
    fail(std::move(d.request), Failure::Kind::kConnection, "the Redis client was closed", false);
  }
  // Closing fails each connection's waiting commands (script loads included, which fail their
  // own waiters); a callback may submit again, which now fails at once.
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (auto c = nodes_[i].connection) c->close();
  }
  if (watch_) watch_->close();
}

// ---- routing ----

NodeId ClientCore::node_for(const Endpoint& endpoint) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].endpoint == endpoint) return static_cast<NodeId>(i);
  }
  nodes_.push_back(Node{endpoint, nullptr});
  return static_cast<NodeId>(nodes_.size() - 1);
}

Connection& ClientCore::connection(NodeId node) {
  auto& c = nodes_[node].connection;
  if (!c) {
    c = std::make_shared<Connection>(io_, nodes_[node].endpoint, connection_options_, *this,
                                     next_connection_id_++);
  }
  return *c;
}

NodeId ClientCore::pick_node(const Request& request) {
  if (!cluster_) return 0;
  if (request.routed) {
    const NodeId owner = slots_.owner(request.slot);
    if (owner != kNoNode) return owner;
    // Not in the map yet (first commands, or an uncovered slot): any node answers with MOVED.
    schedule_refresh();
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].connection && nodes_[i].connection->connected()) return static_cast<NodeId>(i);
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const auto& c = nodes_[i].connection;
    if (!c || c->state() != Connection::State::kBackoff) return static_cast<NodeId>(i);
  }
  return 0;
}

// ---- replies ----

void ClientCore::on_reply(Connection& from, RequestPtr request, Reply reply) {
  if (!request->internal && reply.type == Reply::Type::kError) {
    const std::string_view e = reply.str;
    if (cluster_) {
      if (e.starts_with("MOVED ") || e.starts_with("ASK ")) {
        redirect(from, std::move(request), std::move(reply));
        return;
      }
      if (e.starts_with("TRYAGAIN") || e.starts_with("CLUSTERDOWN")) {
        retry_later(std::move(request), std::move(reply));
        return;
      }
    }
    if (sentinel_ && refused_by_replica(e)) {
      // The master we know was demoted (or lost its link): ask again, retry within the deadline.
      watch_->ask();
      retry_later(std::move(request), std::move(reply));
      return;
    }
    if (request->evalsha && e.starts_with("NOSCRIPT") && request->reloads < kMaxReloads) {
      reload_script(from, std::move(request));
      return;
    }
  }
  finish(std::move(request), std::move(reply), false);
}

void ClientCore::on_failure(Connection&, RequestPtr request, Failure failure) {
  // Before the slot map knows the slot's owner, the node was only a guess (the first seed):
  // one that refuses is passed over for the next seed rather than failing the command.
  if (cluster_ && !closed_ && !request->internal && failure.kind == Failure::Kind::kConnection &&
      (!request->routed || slots_.owner(request->slot) == kNoNode) &&
      request->redirects < kMaxRedirects && connection_options_.clock->now() < request->deadline) {
    ++request->redirects;
    dispatch(std::move(request), true);
    return;
  }
  finish(std::move(request), std::move(failure), false);
}

void ClientCore::on_connected(Connection& c, bool again) {
  if (again) ++stats_.reconnects;
  if (!last_logged_.empty()) {
    if (options_.log != nullptr) options_.log("connected to " + c.name());
    last_logged_.clear();
  }
}

void ClientCore::on_down(Connection& c) {
  if (closed_) return;
  note_trouble(c);
  // Another node may know where this one's slots went (a failover).
  if (cluster_) schedule_refresh();
  // The sentinels may already name another master.
  if (sentinel_) watch_->ask();
}

void ClientCore::note_trouble(const Connection& c) {
  switch (c.trouble()) {
    case Connection::Trouble::kRefused:
      ++stats_.refused_connects;
      break;
    case Connection::Trouble::kTls:
      ++stats_.tls_failures;
      break;
    default:
      break;
  }
  const core::Nanos t = connection_options_.clock->now();
  if (c.last_error() == last_logged_ && t - logged_at_ < kLogEvery) return;
  last_logged_ = c.last_error();
  logged_at_ = t;
  if (options_.log != nullptr) options_.log(last_logged_);
}

// ---- sentinel ----

void ClientCore::wait_for_master(RequestPtr request, bool defer) {
  const core::Nanos due = connection_options_.clock->now() + kRetryDelay;
  if (!watch_->asking() || due >= request->deadline) {
    const std::string& why = watch_->last_error();
    fail(std::move(request), Failure::Kind::kConnection,
         "no master for '" + options_.url.master + "' known yet" + (why.empty() ? "" : ": " + why),
         defer);
    return;
  }
  delayed_.push_back(Delayed{due, std::move(request)});
  arm_retry();
}

void ClientCore::on_master(const Endpoint& at) {
  if (closed_) return;
  if (!nodes_.empty() && nodes_[0].endpoint == at) return;
  const bool switched = !nodes_.empty();
  std::shared_ptr<Connection> old = nodes_.empty() ? nullptr : std::move(nodes_[0].connection);
  nodes_.clear();
  nodes_.push_back(Node{at, nullptr});
  if (switched) ++stats_.master_switches;
  if (options_.log != nullptr) {
    options_.log("the sentinels name " + format_endpoint(at) + " as master '" +
                 options_.url.master + "'" + (switched ? " (a failover)" : ""));
  }
  // What waited on the old master fails now (its failure policy answers); new commands go to
  // the new one as soon as it has accepted the opening (AUTH, SELECT, ROLE).
  if (old) old->close();
  connection(0).start();
}

void ClientCore::redirect(Connection& from, RequestPtr request, Reply reply) {
  const auto r = parse_redirect(reply.str, from.endpoint().host);
  if (!r) {
    fail(std::move(request), Failure::Kind::kProtocol,
         "unreadable redirect from " + from.name() + ": " + reply.str, false);
    return;
  }
  const NodeId node = node_for(r->to);
  if (r->ask) {
    ++stats_.ask;
  } else {
    ++stats_.moved;
    slots_.set(r->slot, node);
    schedule_refresh();
  }
  if (++request->redirects > kMaxRedirects) {
    fail(
        std::move(request), Failure::Kind::kRedirects,
        "more than " + std::to_string(kMaxRedirects) + " cluster redirects, the last: " + reply.str,
        false);
    return;
  }
  if (closed_ || connection_options_.clock->now() >= request->deadline) {
    dispatch(std::move(request), false);  // fails it, with the right reason
    return;
  }
  send_to(node, std::move(request), r->ask, false);
}

void ClientCore::retry_later(RequestPtr request, Reply reply) {
  const core::Nanos due = connection_options_.clock->now() + kRetryDelay;
  if (closed_ || due >= request->deadline) {
    fail(std::move(request), Failure::Kind::kTimeout,
         "the cluster did not serve the command within " +
             core::format_duration(connection_options_.timeout) + ": " + reply.str,
         false);
    return;
  }
  // A fresh attempt: its hops count anew (the deadline bounds the retries).
  request->redirects = 0;
  delayed_.push_back(Delayed{due, std::move(request)});
  arm_retry();
}

void ClientCore::arm_retry() {
  if (retry_armed_ || delayed_.empty()) return;
  retry_armed_ = true;
  retry_timer_.expires_at(
      asio::steady_timer::time_point(std::chrono::nanoseconds(delayed_.front().due)));
  retry_timer_.async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
        if (ec || alive.expired() || !*alive.lock()) return;
        retry_armed_ = false;
        run_retries();
      });
}

void ClientCore::run_retries() {
  const core::Nanos t = connection_options_.clock->now();
  while (!delayed_.empty() && delayed_.front().due <= t) {
    RequestPtr request = std::move(delayed_.front().request);
    delayed_.pop_front();
    dispatch(std::move(request), false);
  }
  arm_retry();
}

void ClientCore::reload_script(Connection& on, RequestPtr request) {
  const std::string sha = request->sha1;
  const auto script = scripts_.find(sha);
  if (script == scripts_.end()) {
    fail(std::move(request), Failure::Kind::kProtocol, "NOSCRIPT for an unknown script " + sha,
         false);
    return;
  }
  const std::string key = std::to_string(on.id()) + ":" + sha;
  auto [it, fresh] = loading_.try_emplace(key);
  const core::Nanos deadline = request->deadline;
  it->second.push_back(std::move(request));
  if (!fresh) return;
  ++stats_.script_loads;
  auto load = std::make_unique<Request>();
  load->internal = true;
  load->deadline = deadline;
  load->args = {"SCRIPT", "LOAD", script->second};
  load->done = [this, key](Outcome outcome) {
    auto waiting = loading_.extract(key);
    if (waiting.empty()) return;
    const auto* reply = std::get_if<Reply>(&outcome);
    for (auto& w : waiting.mapped()) {
      if (reply != nullptr && !reply->is_error()) {
        ++w->reloads;
        dispatch(std::move(w), false);
      } else {
        finish(std::move(w), outcome, false);
      }
    }
  };
  if (on.send(load, false) != Connection::Admit::kQueued) {
    finish(std::move(load),
           Failure{Failure::Kind::kConnection, "cannot load the script on " + on.name()}, false);
  }
}

// ---- cluster topology ----

void ClientCore::schedule_refresh() {
  if (!cluster_ || closed_ || refresh_in_flight_ || nodes_.empty()) return;
  refresh_in_flight_ = true;
  const auto n = nodes_.size();
  // A node already connected answers fastest; then any not known to be down.
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t k = 0; k < n; ++k) {
      const auto node = static_cast<NodeId>((refresh_next_ + k) % n);
      const auto& existing = nodes_[node].connection;
      if (pass == 0 && !(existing && existing->connected())) continue;
      if (pass == 1 && existing && existing->state() == Connection::State::kBackoff) continue;
      auto request = std::make_unique<Request>();
      request->internal = true;
      request->deadline = connection_options_.clock->now() + connection_options_.connect_timeout +
                          connection_options_.timeout;
      request->args = {"CLUSTER", "SLOTS"};
      request->done = [this, node](Outcome outcome) { on_slots(node, std::move(outcome)); };
      if (connection(node).send(request, false) == Connection::Admit::kQueued) {
        refresh_next_ = node;
        return;
      }
    }
  }
  refresh_in_flight_ = false;
  arm_refresh(refresh_backoff_);
  refresh_backoff_ = std::min(refresh_backoff_ * 2, connection_options_.reconnect_max);
}

void ClientCore::on_slots(NodeId asked, Outcome outcome) {
  refresh_in_flight_ = false;
  if (closed_) return;
  std::optional<std::vector<SlotRange>> ranges;
  if (const auto* reply = std::get_if<Reply>(&outcome)) {
    ranges = parse_cluster_slots(*reply, nodes_[asked].endpoint.host);
  }
  if (!ranges || ranges->empty()) {
    // Ask another node next time, soon.
    refresh_next_ = static_cast<NodeId>((asked + 1) % nodes_.size());
    arm_refresh(refresh_backoff_);
    refresh_backoff_ = std::min(refresh_backoff_ * 2, connection_options_.reconnect_max);
    return;
  }
  std::vector<NodeId> owners(kSlotCount, kNoNode);
  for (const auto& r : *ranges) {
    const NodeId node = node_for(r.master);
    std::fill(owners.begin() + r.first, owners.begin() + r.last + 1, node);
  }
  std::vector<bool> owns(nodes_.size(), false);
  for (const NodeId o : owners) {
    if (o != kNoNode) owns[o] = true;
  }
  slots_.assign(std::move(owners));
  ++stats_.topology_refreshes;
  refresh_backoff_ = connection_options_.reconnect_min;
  // Nodes that own nothing any more (old masters, seeds known by another name) are let go once
  // idle, so they do not reconnect forever; a later MOVED or refresh reopens them if needed.
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    auto& c = nodes_[i].connection;
    if (!owns[i] && c && c->pending() == 0) {
      auto gone = std::move(c);
      gone->close();
    }
  }
  if (options_.topology_refresh > 0) arm_refresh(options_.topology_refresh);
}

void ClientCore::arm_refresh(core::Nanos after) {
  refresh_timer_.expires_after(std::chrono::nanoseconds(std::max<core::Nanos>(after, 1)));
  refresh_timer_.async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
        if (ec || alive.expired() || !*alive.lock()) return;
        schedule_refresh();
      });
}

}  // namespace sluice::backend::redis::detail
