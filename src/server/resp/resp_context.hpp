// What a RESP command handler sees: the server's shared state (the engine, counters), its own
// connection's state, the reply buffer, the loop's engine and `now`. No limiter state here:
// CL.THROTTLE and SLUICE.CHECK are decided by the engine.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/core/time.hpp"
#include "sluice/engine/loop.hpp"
#include "sluice/proto/resp/reply_writer.hpp"
#include "sluice/server/resp_server.hpp"
#include "transaction_queue.hpp"

namespace sluice::server::resp {

struct ServerState {
  ServerState(engine::Engine& e, const RespServerOptions& o, core::Nanos now);

  engine::Engine& engine;
  proto::resp::ParserLimits limits;
  const core::Clock& clock;  // each loop's source (steady)
  core::Nanos started;
  std::uint16_t port = 0;
  std::atomic<std::uint64_t> next_client_id{1};
  std::atomic<std::int64_t> connected{0};
  std::atomic<std::uint64_t> connections_received{0};
  std::atomic<std::uint64_t> rejected_connections{0};  // over resp.max_clients
  std::atomic<std::uint64_t> commands_processed{0};
  std::atomic<std::uint64_t> protocol_errors{0};
  // AUTH (and HELLO ... AUTH) that did not authenticate: a wrong user or password, or one not
  // looked at because its peer address is over resp.auth_failure_burst/rate.
  std::atomic<std::uint64_t> auth_wrong{0};
  std::atomic<std::uint64_t> auth_refused{0};
  std::atomic<std::uint64_t> auth_closed{0};  // connections closed at resp.max_auth_failures
  // MULTI: commands refused for a transaction's queue over its caps.
  std::atomic<std::uint64_t> queue_refused{0};
  // The stderr line about failed AUTHs: when the last was written, how many since went unsaid.
  std::atomic<core::Nanos> auth_logged_at{0};
  std::atomic<std::uint64_t> auth_unlogged{0};
};

// The server's counters in the metrics registry.
void collect_server_metrics(metrics::Sink& sink, const ServerState& state);

struct ClientState {
  std::uint64_t id = 0;
  std::string name;
  std::string addr;   // "ip:port" of the peer
  std::string laddr;  // "ip:port" of our end
  int fd = -1;
  int protocol = 2;  // 3 after HELLO 3
  core::Nanos created = 0;
  bool close_after_reply = false;  // QUIT, or a protocol error
  bool authenticated = false;      // AUTH passed (or none is configured)
  std::int64_t auth_failures = 0;  // on this connection; it closes at resp.max_auth_failures
  std::string peer;                // the address AUTH failures are counted under (auth_guard)
  // MULTI: the commands queued until EXEC, and whether one of them was refused on the way
  // (EXEC then answers EXECABORT, as Redis does).
  bool in_multi = false;
  bool multi_refused = false;
  TransactionQueue queued;
};

struct Context;
// Writes a command's reply once the engine's outcome is complete.
using AfterRedis = void (*)(Context&);

struct Context {
  ServerState& server;
  ClientState& client;
  proto::resp::ReplyWriter& out;
  core::Nanos now;
  engine::Loop& loop;
  engine::Outcome& outcome;
  // Set by a handler whose decision waits for Redis: the session completes `outcome` on the
  // loop, then calls it to write the reply (replies stay in command order).
  AfterRedis after = nullptr;
};

}  // namespace sluice::server::resp
