// What a RESP command handler sees: the server's shared state (the CL.THROTTLE table, the
// SLUICE.CHECK hook, counters), its own connection's state, the reply buffer and `now`, read
// once per batch of pipelined commands at the edge.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "sluice/core/gcra.hpp"
#include "sluice/core/time.hpp"
#include "sluice/proto/resp/reply_writer.hpp"
#include "sluice/server/resp_server.hpp"
#include "sluice/table/keyed_table.hpp"

namespace sluice::server::resp {

// CL.THROTTLE keys: one TAT each (16-byte slots). Parameters come with every call, as in
// redis-cell; the table's own parameters only seed a new key's state (TAT = now), which does
// not depend on them.
using ThrottleTable = table::KeyedTable<core::Gcra>;

struct ServerState {
  ServerState(const RespServerOptions& o, core::Nanos now);

  ThrottleTable throttle;
  RespCheckHook check;
  proto::resp::ParserLimits limits;
  core::Nanos started;
  std::uint16_t port = 0;
  std::atomic<std::uint64_t> next_client_id{1};
  std::atomic<std::int64_t> connected{0};
  std::atomic<std::uint64_t> connections_received{0};
  std::atomic<std::uint64_t> commands_processed{0};
  std::atomic<std::uint64_t> protocol_errors{0};
};

struct ClientState {
  std::uint64_t id = 0;
  std::string name;
  std::string addr;   // "ip:port" of the peer
  std::string laddr;  // "ip:port" of our end
  int fd = -1;
  int protocol = 2;  // 3 after HELLO 3
  core::Nanos created = 0;
  bool close_after_reply = false;  // QUIT, or a protocol error
};

struct Context {
  ServerState& server;
  ClientState& client;
  proto::resp::ReplyWriter& out;
  core::Nanos now;
  // The hash of CL.THROTTLE's key when the session computed it ahead (to prefetch the key's
  // bucket while earlier commands of the batch ran); null otherwise.
  const table::KeyHash* key_hash = nullptr;
};

}  // namespace sluice::server::resp
