// One TCP connection to one Redis node (over TLS when configured): the opening commands (AUTH,
// SELECT, ROLE) on every connect before any other, pipelined writes, replies matched in order,
// one timer for every command's deadline, and reconnects with backoff. The client above it
// decides what a reply means (redirects, NOSCRIPT); a connection only carries commands and
// reports back.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "reply_reader.hpp"
#include "request.hpp"
#include "sluice/backend/redis/endpoint.hpp"
#include "sluice/clock/clocks.hpp"
#include "tls_context.hpp"

namespace sluice::backend::redis::detail {

class Connection;

// What a connection tells its owner. Called on the io_context, never from inside send().
class ConnectionEvents {
 public:
  virtual void on_reply(Connection& from, RequestPtr request, Reply reply) = 0;
  virtual void on_failure(Connection& from, RequestPtr request, Failure failure) = 0;
  // `again`: a connect attempt or an earlier connection had failed before this one.
  virtual void on_connected(Connection& c, bool again) = 0;
  // The connection was lost or an attempt failed (c.trouble() says why); it is now waiting to
  // try again.
  virtual void on_down(Connection& c) = 0;
  // A reply with no command waiting, on a subscriber connection (a pub/sub message).
  virtual void on_push(Connection&, Reply) {}

 protected:
  ~ConnectionEvents() = default;
};

// A command sent first on every connection, before any other; a reply that is an error (or,
// for kMaster, a ROLE other than master) fails the attempt as a refused connect would.
struct Opening {
  enum class Expect { kOk, kMaster };
  std::vector<std::string> args;
  Expect expect = Expect::kOk;
};

struct ConnectionOptions {
  const core::Clock* clock = &clock::steady_clock();
  std::vector<Opening> opening;         // AUTH, SELECT, ROLE; PING when there is no AUTH
  std::shared_ptr<const TlsSetup> tls;  // null: plain TCP
  bool subscriber = false;              // replies with no command waiting are pushes
  core::Nanos timeout = 0;
  core::Nanos connect_timeout = 0;
  core::Nanos reconnect_min = 0;
  core::Nanos reconnect_max = 0;
  std::size_t max_pending = 0;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  enum class State {
    kIdle,        // never asked to connect
    kConnecting,  // an attempt is in progress: commands queue
    kConnected,
    kBackoff,  // waiting before the next attempt: commands are refused
    kClosed,
  };
  enum class Admit { kQueued, kDown, kOverloaded };
  // Why the last attempt failed or the connection was lost.
  enum class Trouble {
    kNone,
    kNetwork,  // refused, unreachable, timed out, closed
    kTls,      // the TLS handshake or the certificate check
    kRefused,  // an opening command was refused: AUTH, SELECT, ROLE (not a master)
  };

  Connection(boost::asio::io_context& io, Endpoint endpoint, const ConnectionOptions& options,
             ConnectionEvents& events, std::uint64_t id);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts connecting if idle; a no-op otherwise.
  void start();

  // Queues `request` (taking it only when the answer is kQueued). `asking` sends ASKING just
  // before it, in the same write, for an ASK redirect. An idle connection starts connecting.
  Admit send(RequestPtr& request, bool asking = false);

  // Fails every waiting command with kConnection and stops for good (no reconnect).
  void close();

  State state() const { return state_; }
  bool connected() const { return state_ == State::kConnected; }
  std::size_t pending() const { return pending_.size(); }
  const Endpoint& endpoint() const { return endpoint_; }
  const std::string& name() const { return name_; }
  std::uint64_t id() const { return id_; }
  Trouble trouble() const { return trouble_; }
  const std::string& last_error() const { return last_error_; }

 private:
  struct Pending {
    core::Nanos deadline = 0;
    RequestPtr request;  // null: the reply is read and dropped (ASKING, or timed out)
  };

  void begin_connect();
  void on_connect(std::uint64_t gen, const boost::system::error_code& ec);
  void start_tls(std::uint64_t gen);
  void start_opening();
  bool on_opening_reply(const Reply& reply);  // false: the attempt failed
  void established();
  void connect_failed(const std::string& why, Trouble trouble = Trouble::kNetwork);
  void lose(Failure::Kind kind, const std::string& why);
  void enter_backoff();
  void fail_all(Failure::Kind kind, const std::string& message);

  void schedule_flush();
  void flush();
  void start_write();
  void read();
  void on_read(std::uint64_t gen, const boost::system::error_code& ec, std::size_t n);

  void push_pending(core::Nanos deadline, RequestPtr request);
  void pop_pending();
  void arm_timer(core::Nanos at);
  void check_deadlines();

  boost::asio::io_context& io_;
  Endpoint endpoint_;
  std::string name_;
  ConnectionOptions options_;
  ConnectionEvents& events_;
  std::uint64_t id_;

  boost::asio::ip::tcp::socket& socket() { return tls_ ? tls_->next_layer() : socket_; }
  // Runs f(stream): the TLS stream when there is one, else the socket.
  template <class F>
  void with_stream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else {
      f(socket_);
    }
  }

  boost::asio::ip::tcp::socket socket_;  // plain TCP
  // TLS: a stream (and its socket) per attempt, shared with the handlers of its operations so
  // that it outlives them after the next attempt replaces it.
  std::shared_ptr<TlsStream> tls_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer connect_timer_;  // connect timeout, then backoff
  boost::asio::steady_timer deadline_timer_;

  State state_ = State::kIdle;
  std::uint64_t gen_ = 0;  // bumped per attempt and at loss/close: stale handlers see a change
  bool had_trouble_ = false;
  core::Nanos backoff_ = 0;
  std::size_t opening_left_ = 0;  // replies to the opening commands still to read
  Trouble trouble_ = Trouble::kNone;
  std::string last_error_;

  std::string out_;   // commands not yet handed to the socket
  std::string wbuf_;  // the write in flight
  bool writing_ = false;
  bool flush_posted_ = false;

  ReplyReader reader_;
  std::array<char, 16 * 1024> rbuf_{};

  // Deadlines are nearly always in submission order; only redirects and retries (older
  // deadlines sent later) break that, and then the timer scans everything.
  std::deque<Pending> pending_;
  std::size_t expired_front_ = 0;  // leading entries already timed out (in-order case)
  bool in_order_ = true;
  core::Nanos tail_deadline_ = 0;
  core::Nanos pending_since_ = 0;
  core::Nanos last_read_ = 0;
  core::Nanos timer_at_ = 0;  // 0: not armed
  std::uint64_t timer_gen_ = 0;
};

}  // namespace sluice::backend::redis::detail
