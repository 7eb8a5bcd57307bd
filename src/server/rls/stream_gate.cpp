// StreamGate (stream_gate.hpp): the acceptor, and each connection's two copy loops.
#include "stream_gate.hpp"

#include <malloc.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/listener_admission.hpp"
#include "stream_watch.hpp"

namespace sluice::server::rls {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol::socket;

namespace {

// Each direction copies through one buffer (a read waits for the write before it): 32 KiB a
// connection, about what gRPC's own buffers take.
constexpr std::size_t kBuffer = 16 * 1024;
// After connections close, memory the allocator holds is given back to the system, at most
// once a second: glibc keeps freed blocks in its arenas, so the 1.9 GB a flood of streams once
// took stayed resident after the client left (malloc_trim gave back all but 106 MB of it).
constexpr std::chrono::seconds kTrimAfter{1};

// GOAWAY(last stream, ENHANCE_YOUR_CALM) with a reason a person can read.
std::string goaway(const StreamWatch& watch, StreamWatch::Verdict verdict) {
  const std::string why =
      verdict == StreamWatch::Verdict::kTooManyResets
          ? "more than " + std::to_string(watch.max_resets()) +
                " streams reset within a second (10 x rls.max_concurrent_streams; never fewer "
                "than 1000)"
          : "more than " + std::to_string(watch.max_streams_before_ack()) +
                " streams before acknowledging SETTINGS (rls.max_concurrent_streams; never "
                "fewer than 100)";
  const std::size_t length = 8 + why.size();
  std::string f;
  f += static_cast<char>(length >> 16 & 0xff);
  f += static_cast<char>(length >> 8 & 0xff);
  f += static_cast<char>(length & 0xff);
  f += '\x07';                // GOAWAY
  f += std::string(5, '\0');  // flags, stream 0
  const std::uint32_t last = watch.last_stream();
  for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>(last >> shift & 0xff);
  f += std::string("\0\0\0\x0b", 4);  // ENHANCE_YOUR_CALM
  return f + why;
}

}  // namespace

class StreamGate::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(StreamGate& gate, tcp::socket client, unix_socket grpc)
      : gate_(gate),
        client_(std::move(client)),
        grpc_(std::move(grpc)),
        watch_(gate.max_streams_) {}

  ~Connection() {
    gate_.open_.erase(this);
    gate_.closed();
  }

  void start() {
    gate_.open_.insert(this);
    from_client();
    to_client();
  }

  void close() {
    boost::system::error_code ignored;
    client_.shutdown(tcp::socket::shutdown_both, ignored);
    client_.close(ignored);
    grpc_.close(ignored);
  }

 private:
  void from_client() {
    client_.async_read_some(
        asio::buffer(up_),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          if (ec) return self->close();
          const auto verdict =
              self->watch_.feed({reinterpret_cast<const unsigned char*>(self->up_.data()), n},
                                self->gate_.clock_.now());
          if (verdict != StreamWatch::Verdict::kOk) return self->cut(verdict);
          asio::async_write(self->grpc_, asio::buffer(self->up_.data(), n),
                            [self](const boost::system::error_code& wec, std::size_t) {
                              if (wec) return self->close();
                              self->from_client();
                            });
        });
  }

  void to_client() {
    grpc_.async_read_some(
        asio::buffer(down_),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          if (ec) return self->close();
          self->writing_to_client_ = true;
          asio::async_write(self->client_, asio::buffer(self->down_.data(), n),
                            [self](const boost::system::error_code& wec, std::size_t) {
                              self->writing_to_client_ = false;
                              if (!self->goaway_.empty()) return self->tell_and_close();
                              if (wec) return self->close();
                              self->to_client();
                            });
        });
  }

  // gRPC's end closes (which ends the streams it holds); the client is told why, once a frame
  // of gRPC's half written to it is through, and closed.
  void cut(StreamWatch::Verdict verdict) {
    gate_.cut_.fetch_add(1, std::memory_order_relaxed);
    boost::system::error_code ignored;
    grpc_.close(ignored);
    goaway_ = goaway(watch_, verdict);
    if (!writing_to_client_) tell_and_close();
  }

  void tell_and_close() { refuse_connection(client_, goaway_); }

  StreamGate& gate_;
  tcp::socket client_;
  unix_socket grpc_;
  StreamWatch watch_;
  std::array<char, kBuffer> up_;
  std::array<char, kBuffer> down_;
  bool writing_to_client_ = false;
  std::string goaway_;  // set when cut: sent once the client's socket is free
};

StreamGate::StreamGate(const tcp::endpoint& at, std::int64_t max_streams,
                       std::atomic<std::uint64_t>& cut, const core::Clock& clock)
    : acceptor_(io_), retry_(io_), trim_(io_), max_streams_(max_streams), cut_(cut), clock_(clock) {
  boost::system::error_code ec;
  acceptor_.open(at.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && at.protocol() == tcp::v6()) acceptor_.set_option(asio::ip::v6_only(false), ec);
  if (!ec) acceptor_.bind(at, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(ec.message());
}

StreamGate::~StreamGate() { stop(); }

void StreamGate::start(Handoff handoff) {
  handoff_ = std::move(handoff);
  accept();
  thread_ = std::thread([this] { io_.run(); });
}

void StreamGate::stop_handoffs() {
  std::lock_guard lock(handoff_mutex_);
  handing_off_ = false;
}

void StreamGate::stop() {
  if (!thread_.joinable()) return;
  // Everything closed on the gate's thread; its run() returns once the handlers have seen it.
  asio::post(io_, [this] {
    stopping_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    retry_.cancel();
    trim_.cancel();
    const std::vector<Connection*> open(open_.begin(), open_.end());
    for (Connection* c : open) c->close();
  });
  thread_.join();
}

int StreamGate::port() const { return acceptor_.local_endpoint().port(); }

void StreamGate::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket client) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      if (accept_again_at_once(ec)) return accept();
      retry_.expires_after(kAcceptPause);
      retry_.async_wait([this](const boost::system::error_code& wait_ec) {
        if (!wait_ec && acceptor_.is_open()) accept();
      });
      return;
    }
    int fds[2];  // non-blocking, as the sockets gRPC accepts itself are (it reads until EAGAIN)
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) != 0) {
      refuse_connection(client, "");  // out of descriptors: this client goes, others stay
      return accept();
    }
    boost::system::error_code ignored;
    client.set_option(tcp::no_delay(true), ignored);
    unix_socket ours(io_, asio::local::stream_protocol(), fds[0]);
    {
      std::lock_guard lock(handoff_mutex_);
      if (!handing_off_) {
        ::close(fds[1]);
        refuse_connection(client, "");
        return;  // stopping: stop() closes the acceptor
      }
      handoff_(fds[1]);  // gRPC owns and closes it from here
    }
    std::make_shared<Connection>(*this, std::move(client), std::move(ours))->start();
    accept();
  });
}

void StreamGate::closed() {
  if (trim_pending_ || stopping_) return;
  trim_pending_ = true;
  trim_.expires_after(kTrimAfter);
  trim_.async_wait([this](const boost::system::error_code& ec) {
    trim_pending_ = false;
    if (!ec) ::malloc_trim(0);
  });
}

}  // namespace sluice::server::rls
