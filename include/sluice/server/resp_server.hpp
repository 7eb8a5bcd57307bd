// The Redis protocol (RESP) listener of DESIGN.md: `CL.THROTTLE key max_burst count period
// [quantity]` answered exactly as redis-cell answers it, `SLUICE.CHECK rule key [cost]` for
// configured rules (through a hook the composition root connects to the rules engine), and
// the commands clients send on connect (PING, ECHO, HELLO, CLIENT, COMMAND, INFO, SELECT,
// QUIT, CONFIG GET). RESP2 by default, RESP3 after HELLO 3; inline commands too.
//
// Threads: with `workers` > 0 the server runs that many event loops, each an io_context on its
// own thread with its own SO_REUSEPORT acceptor (the kernel spreads connections over them), as
// the gateway does; a connection lives on one loop from accept to close, so its pipelined
// replies stay in order without locks, and the loops share only the CL.THROTTLE table (one
// spin lock per key slot) and a few relaxed counters. With `workers` == 0 it runs on the
// io_context passed in (tests, embedding), which one thread must run: sessions take no locks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/core/time.hpp"
#include "sluice/proto/resp/request_parser.hpp"

namespace sluice::server {

// What SLUICE.CHECK got from the rules: a decision, or an error to send as is
// ("ERR unknown rule 'api'"). The reply is CL.THROTTLE's five integers.
struct RespCheck {
  std::string error;  // non-empty: the error reply (with its code), decision ignored
  core::Decision decision;
};

// Decides `cost` permits of `rule` for `key` at `now`. Called on a loop thread: thread-safe.
using RespCheckHook = std::function<RespCheck(std::string_view rule, std::string_view key,
                                              std::int64_t cost, core::Nanos now)>;

struct RespServerOptions {
  int workers = 1;                          // own event loops; 0: run on the io_context given
  std::size_t throttle_memory = 64u << 20;  // CL.THROTTLE's key table budget (16 B a key)
  proto::resp::ParserLimits limits;         // caps on what one client command may hold
  RespCheckHook check;                      // SLUICE.CHECK; empty: "ERR no rules configured"
};

class RespServer {
 public:
  // Nothing is bound until start(). `io` runs the connections when options.workers is 0.
  RespServer(boost::asio::io_context& io, config::Endpoint listen, RespServerOptions options = {});
  ~RespServer();  // stop()
  RespServer(const RespServer&) = delete;
  RespServer& operator=(const RespServer&) = delete;

  // Binds and starts accepting (and starts the worker threads). Throws std::runtime_error
  // naming the address when it cannot bind.
  void start();

  // Stops accepting, closes every connection, joins the worker threads. Idempotent; not from
  // one of the server's own threads.
  void stop();

  // The address bound (the chosen port when the port asked for was 0). After start().
  config::Endpoint local_endpoint() const;

  // Prometheus text: connections, commands, protocol errors, CL.THROTTLE table occupancy.
  void write_metrics(std::string& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::server
