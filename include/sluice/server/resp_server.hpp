// The Redis protocol (RESP) listener of DESIGN.md (docs/resp.md): `CL.THROTTLE key max_burst
// count period [quantity]` answered exactly as redis-cell answers it, `SLUICE.CHECK rule key
// [cost]` and `SLUICE.RELEASE token` for configured rules, all decided by the engine; AUTH,
// MULTI/EXEC/DISCARD, and the commands clients send on connect (PING, ECHO, HELLO, CLIENT,
// COMMAND, INFO, SELECT, QUIT, CONFIG GET). RESP2 by default, RESP3 after HELLO 3; inline
// commands too.
//
// Threads: with `workers` > 0 the server runs that many event loops, each an io_context on its
// own thread with its own SO_REUSEPORT acceptor (the kernel spreads connections over them), as
// the gateway does; a connection lives on one loop from accept to close, so its pipelined
// replies stay in order without locks, and the loops share only the engine and a few relaxed
// counters; each loop has its own engine::Loop (and Redis store). With `workers` == 0 it runs on
// the io_context passed in (tests, embedding), which one thread must run: sessions take no locks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/metrics/registry.hpp"
#include "sluice/proto/resp/request_parser.hpp"

namespace sluice::server {

struct RespServerOptions {
  int workers = 1;                        // own event loops; 0: run on the io_context given
  proto::resp::ParserLimits limits;       // caps on what one client command may hold
  metrics::Registry* registry = nullptr;  // where its counters go (may be null)
  core::Clocks clocks;                    // the steady one is required: each loop's time
};

class RespServer {
 public:
  // Nothing is bound until start(). `io` runs the connections when options.workers is 0.
  // CL.THROTTLE and SLUICE.CHECK are decided by `engine` (which must outlive the server).
  RespServer(boost::asio::io_context& io, config::Endpoint listen, engine::Engine& engine,
             RespServerOptions options = {});
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::server
