// The RLS listener's front door: Sluice accepts each connection itself and gives gRPC one end
// of a socketpair (grpc::AddInsecureChannelFromFd), forwarding bytes between the two on its own
// thread. gRPC 1.51 holds a client to SETTINGS_MAX_CONCURRENT_STREAMS only once the client has
// acknowledged it, and its resource quota never gets to cancelling streams, so a client that
// never acknowledges could open streams without end (100k streams: 1.2 GB), and so could one
// resetting each stream at once. The client's frame headers are read as they pass
// (stream_watch.hpp): past its limits the client is sent GOAWAY (ENHANCE_YOUR_CALM) and
// disconnected.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "sluice/core/clock.hpp"

namespace sluice::server::rls {

class StreamGate {
 public:
  // Hands each accepted connection's gRPC end (a socket descriptor) to `handoff`.
  using Handoff = std::function<void(int fd)>;

  // Binds `at` (throws std::runtime_error with the reason when it cannot); accepts after
  // start(). Each connection cut adds one to `cut` (which must outlive the gate).
  // `max_streams`: rls.max_concurrent_streams (stream_watch.hpp says what is held before the
  // ACK).
  // `clock`: the time resets are counted per second in (steady).
  StreamGate(const boost::asio::ip::tcp::endpoint& at, std::int64_t max_streams,
             std::atomic<std::uint64_t>& cut, const core::Clock& clock);
  ~StreamGate();  // stop()
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  void start(Handoff handoff);
  // No connection is handed to gRPC after this returns (gRPC is about to shut down); new ones
  // are closed. Any thread.
  void stop_handoffs();
  // Stops accepting and closes every connection; joins the thread. Idempotent.
  void stop();

  int port() const;

 private:
  class Connection;
  void accept();
  void closed();

  boost::asio::io_context io_{1};
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  boost::asio::steady_timer trim_;
  bool trim_pending_ = false;
  bool stopping_ = false;
  std::unordered_set<Connection*> open_;  // on the gate's thread only
  std::int64_t max_streams_;
  Handoff handoff_;
  std::mutex handoff_mutex_;
  bool handing_off_ = true;  // under handoff_mutex_
  std::thread thread_;
  std::atomic<std::uint64_t>& cut_;
  const core::Clock& clock_;
};

}  // namespace sluice::server::rls
