// One worker loop's view of the upstreams: per server, its keep-alive connections and its
// passive health (max_fails failures in a row -> skipped for fail_timeout, as nginx's
// max_fails/fail_timeout), and per upstream a round-robin cursor. Loop thread only: every
// loop has its own, so nothing here takes a lock.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gateway_metrics.hpp"
#include "loop_types.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/core/time.hpp"

namespace sluice::server::gateway {

struct UpstreamConnection {
  explicit UpstreamConnection(const Executor& ex) : socket(ex) {}
  Socket socket;
  boost::beast::flat_buffer buffer;
  bool reused = false;  // taken from the pool: the server may have closed it meanwhile
};

struct ServerState {
  config::Endpoint endpoint;
  std::string authority;  // "host:port": the Host for clients that sent none
  std::optional<boost::asio::ip::tcp::endpoint> address;  // resolved at first use
  int fails = 0;
  core::Nanos down_until = 0;
  std::vector<std::unique_ptr<UpstreamConnection>> idle;
};

struct UpstreamState {
  std::uint64_t version = 0;  // the snapshot the server list was last checked against
  std::vector<std::shared_ptr<ServerState>> servers;
  std::size_t next = 0;
  int max_fails = 1;
  core::Nanos fail_timeout = 0;
  UpstreamStats* stats = nullptr;
};

class UpstreamPool {
 public:
  // Idle keep-alive connections kept per server and loop.
  static constexpr std::size_t kMaxIdle = 128;

  explicit UpstreamPool(LoopStats& stats) : stats_(stats) {}

  // The state of `upstream` as of snapshot `version`: servers added or removed by a reload
  // are picked up, those that stay keep their connections and health.
  UpstreamState& state(const config::Upstream& upstream, std::uint64_t version);

  // The next server by round robin that is not down and not in `tried` (bit i = servers[i]);
  // when every untried server is down, the next untried one all the same (better a try than
  // a certain 502). Null when every server was tried. Marks the pick in `tried`.
  std::shared_ptr<ServerState> pick(UpstreamState& up, core::Nanos now, std::uint64_t& tried);

  // A pooled connection to `server`, or null; with `check`, one that still looks open (one
  // syscall: a peek).
  std::unique_ptr<UpstreamConnection> take_idle(ServerState& server, bool check);
  void put_idle(ServerState& server, std::unique_ptr<UpstreamConnection> conn);

  void failed(UpstreamState& up, ServerState& server, core::Nanos now);
  void succeeded(ServerState& server) { server.fails = 0; }

  // Closes every pooled connection (shutdown).
  void clear() { upstreams_.clear(); }

 private:
  LoopStats& stats_;
  std::map<std::string, UpstreamState, std::less<>> upstreams_;
};

}  // namespace sluice::server::gateway
