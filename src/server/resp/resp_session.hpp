// One client connection: read what arrived, parse every complete command, answer them in
// order into one buffer, write it, read again. Reading waits while a write is in flight, so a
// client that pipelines without reading its replies is slowed by TCP, never buffered for.
//
// Pipelined commands are taken in batches (up to kBatch): the CL.THROTTLE keys of a batch are
// hashed and their table buckets prefetched before the first of them is decided, so a batch
// of random keys waits for memory about once instead of once per key.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "resp_context.hpp"
#include "sluice/proto/resp/request_parser.hpp"
#include "sluice/table/key_hash.hpp"

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
  // Moves complete commands from the parser into batch_; returns the parser's last status.
  proto::resp::ParseStatus collect();
  // Runs batch_, stopping after a command that closes the connection; returns how many ran.
  std::uint64_t run_batch(Context& ctx);

  static constexpr std::size_t kBatch = 64;
  // Buffers keep this much capacity between requests; a burst's larger growth is given back.
  static constexpr std::size_t kKeepBytes = 64 * 1024;
  struct Pending {
    std::uint32_t first = 0;  // into arg_spans_
    std::uint32_t count = 0;
    bool hashed = false;
    table::KeyHash hash{};
  };

  std::shared_ptr<ServerState> state_;
  std::shared_ptr<SessionRegistry> registry_;
  boost::asio::ip::tcp::socket socket_;
  proto::resp::RequestParser parser_;
  ClientState client_;
  std::string out_;      // replies being built
  std::string sending_;  // replies being written
  std::array<char, 16 * 1024> buf_;
  // The batch: arguments copied out of the parser (whose views last one command).
  std::string arg_bytes_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> arg_spans_;
  std::vector<Pending> batch_;
  std::vector<std::string_view> argv_;
};

}  // namespace sluice::server::resp
