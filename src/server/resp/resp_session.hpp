// One client connection: read what arrived, parse every complete command, answer them in
// order into one buffer, write it, read again. Reading waits while a write is in flight, so a
// client that pipelines without reading its replies is slowed by TCP, never buffered for.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

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

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<ServerState> state, std::shared_ptr<SessionRegistry> registry,
          boost::asio::ip::tcp::socket socket);
  ~Session();

  void start();
  // Closes the socket; pending operations end with an error and release the session.
  // On the session's executor only.
  void close();

 private:
  void read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void write();

  std::shared_ptr<ServerState> state_;
  std::shared_ptr<SessionRegistry> registry_;
  boost::asio::ip::tcp::socket socket_;
  proto::resp::RequestParser parser_;
  ClientState client_;
  std::string out_;      // replies being built
  std::string sending_;  // replies being written
  std::array<char, 16 * 1024> buf_;
};

}  // namespace sluice::server::resp
