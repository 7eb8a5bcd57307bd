// Worker (worker.hpp).
#include "worker.hpp"

#include <fmt/format.h>
#include <sys/socket.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>

#include "client_session.hpp"
#include "common/listener_admission.hpp"
#include "edge_read.hpp"
#include "sluice/log/log.hpp"

namespace sluice::server::gateway {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

Awaitable<void> run_session(std::shared_ptr<ClientSession> session) { co_await session->run(); }

// One thread runs the loop, and only it touches the loop's sockets and timers (this constructor
// and ~Worker touch them before the thread starts and after it is joined); other threads only
// post to it (shutdown, an adaptive permit handed over, stop). So the reactor's per-socket
// locks can go (Asio's UNSAFE_IO hint) and the scheduler's, which posts need, stay: about 260
// fewer instructions a request (callgrind, a refusal: 9,615 -> 9,355).
constexpr int kLoopConcurrency = BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO;

}  // namespace

Worker::Worker(engine::Engine& engine, AccessLog& log, const tcp::endpoint& address,
               metrics::Registry* registry, const core::Clock& source)
    : engine_(engine), log_(log), io_(std::make_unique<asio::io_context>(kLoopConcurrency)) {
  acceptor_ = std::make_unique<Acceptor>(io_->get_executor());
  acceptor_->open(address.protocol());
  acceptor_->set_option(tcp::acceptor::reuse_address(true));
  if (address.address().is_v6() && address.address().is_unspecified()) {
    acceptor_->set_option(asio::ip::v6_only(false));
  }
  // Every loop binds the same port; the kernel spreads new connections over them.
  const int one = 1;
  if (::setsockopt(acceptor_->native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    throw boost::system::system_error(errno, boost::system::system_category(), "SO_REUSEPORT");
  }
  acceptor_->bind(address);
  acceptor_->listen(asio::socket_base::max_listen_connections);
  local_ = acceptor_->local_endpoint();
  clock_ = std::make_unique<LoopClock>(*io_, source);
  loop_ = std::make_unique<engine::Loop>(engine_, *io_, registry, clock_.get(), &source);
}

Worker::~Worker() {
  stop();
  acceptor_.reset();
  loop_.reset();
  pool_.clear();
  // Destroys the handlers still pending, and with them the sessions they keep alive; those
  // unregister from sessions_, which must still exist.
  io_.reset();
}

void Worker::start() {
  asio::co_spawn(*io_, accept_loop(), asio::detached);
  thread_ = std::thread([this] {
    try {
      io_->run();
    } catch (const std::exception& e) {
      log::error(std::string("sluice: gateway loop stopped: ") + e.what());
    }
  });
}

void Worker::shutdown() {
  asio::post(*io_, [this] {
    if (draining_) return;
    draining_ = true;
    boost::system::error_code ignored;
    acceptor_->close(ignored);
    for (ClientSession* s : sessions_) s->close_if_idle();
  });
}

void Worker::stop() {
  io_->stop();
  if (thread_.joinable()) thread_.join();
}

Awaitable<void> Worker::accept_loop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_->async_accept(kNoThrow);
    if (ec) {
      if (draining_ || !acceptor_->is_open() || ec == asio::error::operation_aborted) co_return;
      if (accept_again_at_once(ec)) continue;
      Timer pause(io_->get_executor(), kAcceptPause);
      co_await pause.async_wait(kNoThrow);
      continue;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    edge::want_queue_length(socket);
    asio::co_spawn(*io_, run_session(std::make_shared<ClientSession>(*this, std::move(socket))),
                   asio::detached);
  }
}

}  // namespace sluice::server::gateway
