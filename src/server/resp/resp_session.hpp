// One client connection: read what arrived, run every complete command in order into one
// reply buffer, write it, read again. Reading waits while a write is in flight, so a client
// that pipelines without reading its replies is slowed by TCP, never buffered for. A command
// whose decision waits for Redis holds the ones after it, so replies stay in order. MULTI
// queues commands until EXEC runs them in order (redis-py's pipeline() sends them).
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/loop_clock.hpp"
#include "resp_context.hpp"
#include "sluice/proto/resp/request_parser.hpp"

namespace sluice::server::resp {

class Session;

// The sessions of one event loop (or of the shared io_context), so stop() can close them.
// Held by shared_ptr from each session: whichever goes last, nothing dangles.
struct SessionRegistry {
  std::mutex mu;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  bool closed = false;
};

// What one event loop gives its sessions: its clock and its engine. Outlives them (the
// listener owns it and closes every session before it goes).
struct LoopParts {
  LoopParts(engine::Engine& e, boost::asio::io_context& io, metrics::Registry* registry,
            const core::Clock& source)
      : clock(io, source), loop(e, io, registry, &clock, &source) {}
  LoopClock clock;
  engine::Loop loop;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<ServerState> state, std::shared_ptr<SessionRegistry> registry,
          LoopParts& parts, boost::asio::ip::tcp::socket socket);
  ~Session();

  void start();
  // Closes the socket; pending operations end with an error and release the session.
  // On the session's executor only.
  void close();

 private:
  boost::asio::awaitable<void> run();
  // Runs one command (or queues it inside MULTI); EXEC runs the queue.
  boost::asio::awaitable<void> execute(proto::resp::ReplyWriter& writer,
                                       std::span<const std::string_view> args);
  // Inside MULTI: queues the command, or refuses it (a command Redis would refuse, or one
  // past resp.max_queued_commands/bytes).
  void queue(proto::resp::ReplyWriter& writer, std::span<const std::string_view> args,
             const config::RespSettings& caps);
  boost::asio::awaitable<void> run_one(proto::resp::ReplyWriter& writer,
                                       std::span<const std::string_view> args);
  boost::asio::awaitable<void> exec(proto::resp::ReplyWriter& writer);

  // Buffers keep this much capacity between requests; a burst's larger growth is given back.
  static constexpr std::size_t kKeepBytes = 64 * 1024;

  std::shared_ptr<ServerState> state_;
  std::shared_ptr<SessionRegistry> registry_;
  LoopParts& parts_;
  boost::asio::ip::tcp::socket socket_;
  proto::resp::RequestParser parser_;
  ClientState client_;
  engine::Outcome outcome_;
  std::array<char, 16 * 1024> buf_{};
  std::string out_;
};

}  // namespace sluice::server::resp
