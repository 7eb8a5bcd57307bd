// What Client does, behind its header: routing (standalone, by cluster slot, or to the master the
// sentinels name), what an error reply means (MOVED, ASK, TRYAGAIN, NOSCRIPT, READONLY), the
// cluster topology, the opening of each connection (AUTH, SELECT, ROLE) and the stats.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "connection.hpp"
#include "request.hpp"
#include "sentinel_watch.hpp"
#include "slot_map.hpp"
#include "sluice/backend/redis/client.hpp"

namespace sluice::backend::redis::detail {

class ClientCore final : public ConnectionEvents {
 public:
  ClientCore(boost::asio::io_context& io, ClientOptions options);
  ~ClientCore();
  ClientCore(const ClientCore&) = delete;
  ClientCore& operator=(const ClientCore&) = delete;

  void command(std::vector<std::string> args, std::string_view routing_key, Callback cb);
  void eval(const Script& script, std::vector<std::string> keys, std::vector<std::string> args,
            Callback cb);
  void eval(const Script& script, std::string_view routing_key, std::size_t key_count,
            const WireArgs& tail, Callback cb);
  bool connected() const;
  const Client::Stats& stats() const { return stats_; }
  void close();

  void on_reply(Connection& from, RequestPtr request, Reply reply) override;
  void on_failure(Connection& from, RequestPtr request, Failure failure) override;
  void on_connected(Connection& c, bool again) override;
  void on_down(Connection& c) override;

 private:
  struct Node {
    Endpoint endpoint;
    std::shared_ptr<Connection> connection;  // null until first used
  };
  struct Delayed {
    core::Nanos due = 0;
    RequestPtr request;
  };

  void submit(std::vector<std::string> args, std::string_view routing_key, Callback cb);
  // `routed`: cluster: the slot of `routing_key` picks the node (else any node will do).
  void submit(RequestPtr request, std::string_view routing_key, bool routed, Callback cb);
  void submit_script(const Script& script, RequestPtr request, std::string_view routing_key,
                     bool keyed, Callback cb);
  // `defer`: called from command()/eval(), where callbacks must not run yet.
  void dispatch(RequestPtr request, bool defer);
  void send_to(NodeId node, RequestPtr request, bool asking, bool defer);
  void finish(RequestPtr request, Outcome outcome, bool defer);
  void fail(RequestPtr request, Failure::Kind kind, std::string message, bool defer);

  NodeId pick_node(const Request& request);
  NodeId node_for(const Endpoint& endpoint);
  Connection& connection(NodeId node);

  void redirect(Connection& from, RequestPtr request, Reply reply);
  void retry_later(RequestPtr request, Reply reply);
  void arm_retry();
  void run_retries();
  void reload_script(Connection& on, RequestPtr request);

  void schedule_refresh();
  void on_slots(NodeId asked, Outcome outcome);
  void arm_refresh(core::Nanos after);

  // Sentinel: commands wait (within their deadline) while the sentinels are being asked.
  void wait_for_master(RequestPtr request, bool defer);
  void on_master(const Endpoint& at);
  // A connection attempt failed or a connection was lost: counted, and said on stderr when
  // the reason is new (or every kLogEvery while it lasts).
  void note_trouble(const Connection& c);

  boost::asio::io_context& io_;
  ClientOptions options_;
  ConnectionOptions connection_options_;
  bool cluster_;
  bool sentinel_;
  bool closed_ = false;
  Client::Stats stats_;
  std::uint64_t next_connection_id_ = 1;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for timer and post handlers

  std::vector<Node> nodes_;  // standalone: just the server; cluster: seeds, then what we learn
  SlotMap slots_;

  // Cluster topology refresh: at most one CLUSTER SLOTS in flight.
  bool refresh_in_flight_ = false;
  NodeId refresh_next_ = 0;
  core::Nanos refresh_backoff_;
  boost::asio::steady_timer refresh_timer_;

  // TRYAGAIN / CLUSTERDOWN: retried after a fixed short delay, so the queue is in due order.
  std::deque<Delayed> delayed_;
  bool retry_armed_ = false;
  boost::asio::steady_timer retry_timer_;

  // Scripts by SHA1 (the text to SCRIPT LOAD on NOSCRIPT), and the calls waiting for a load, per
  // connection and script, so a burst of NOSCRIPTs after a restart sends one SCRIPT LOAD.
  std::unordered_map<std::string, std::string> scripts_;
  std::unordered_map<std::string, std::vector<RequestPtr>> loading_;

  std::string last_logged_;
  core::Nanos logged_at_ = 0;

  // Last: destroyed first, as it calls back into this object.
  std::unique_ptr<SentinelWatch> watch_;
};

}  // namespace sluice::backend::redis::detail
