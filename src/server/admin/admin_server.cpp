// AdminServer (sluice/server/admin_server.hpp): the listener, its sessions and the watcher.
#include "sluice/server/admin_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "admin_service.hpp"
#include "admin_session.hpp"
#include "common/loop_clock.hpp"
#include "config_store.hpp"
#include "config_worker.hpp"
#include "config_watcher.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/loop.hpp"

namespace sluice::server {

namespace asio = boost::asio;
using asio::ip::tcp;

struct AdminServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& context, engine::Engine& e, AdminOptions options,
       metrics::Registry& registry)
      : io(context),
        engine(e),
        listen(std::move(options.listen)),
        worker(std::make_unique<ConfigWorker>()),
        store(std::make_shared<ConfigStore>(engine, std::move(options.config_path),
                                            std::move(options.rls_files),
                                            options.max_config_size)),
        service(std::make_shared<AdminService>(store, registry, worker->executor())),
        clock(io),
        loop(std::make_unique<engine::Loop>(engine, io, &registry, &clock)),
        lease_timer(io),
        acceptor(asio::make_strand(io)) {
    // The decision API decides on this loop; rules kept in Redis go through its own store.
    service->set_loop(loop.get(), &clock);
  }

  // The decision service's concurrency permits that were never given back, returned when
  // their time is up: looked at once a second.
  void expire_leases() {
    lease_timer.expires_after(std::chrono::seconds(1));
    lease_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self) return;
      self->engine.expire_leases(self->clock.now());
      self->expire_leases();
    });
  }

  void accept() {
    acceptor.async_accept(
        asio::make_strand(io),
        [self = shared_from_this()](const boost::system::error_code& ec, tcp::socket socket) {
          if (ec == asio::error::operation_aborted || !self->acceptor.is_open()) return;
          if (!ec) self->open(std::move(socket));
          self->accept();  // other errors (EMFILE, ECONNABORTED) are per connection: keep going
        });
  }

  void open(tcp::socket socket) {
    auto session = std::make_shared<AdminSession>(std::move(socket), service);
    {
      std::lock_guard lock(mutex);
      if (stopped) return;
      std::erase_if(sessions, [](const auto& weak) { return weak.expired(); });
      sessions.push_back(session);
    }
    session->start();
  }

  asio::io_context& io;
  engine::Engine& engine;
  config::Endpoint listen;
  std::unique_ptr<ConfigWorker> worker;  // reset by ~AdminServer, never on its own thread
  std::shared_ptr<ConfigStore> store;
  std::shared_ptr<AdminService> service;
  LoopClock clock;
  std::unique_ptr<engine::Loop> loop;
  asio::steady_timer lease_timer;
  std::shared_ptr<ConfigWatcher> watcher;
  tcp::acceptor acceptor;
  tcp::endpoint bound;
  std::mutex mutex;  // sessions, stopped
  std::vector<std::weak_ptr<AdminSession>> sessions;
  bool stopped = false;
};

AdminServer::AdminServer(asio::io_context& io, engine::Engine& engine, AdminOptions options,
                         metrics::Registry& registry)
    : impl_(std::make_shared<Impl>(io, engine, std::move(options), registry)) {}

AdminServer::~AdminServer() {
  stop();
  // Joins the config thread (a reload in progress finishes first); the jobs it drops release
  // what they hold here, on this thread.
  impl_->worker.reset();
  // The loop's Redis sockets belong to io, which may outlive handlers that keep Impl alive.
  impl_->service->set_loop(nullptr, nullptr);
  impl_->loop.reset();
}

void AdminServer::start() {
  const config::Endpoint& where = impl_->listen;
  try {
    tcp::resolver resolver(impl_->io);
    const auto flags = tcp::resolver::passive | tcp::resolver::numeric_service;
    auto results = resolver.resolve(where.host.empty() ? std::string("0.0.0.0") : where.host,
                                    std::to_string(where.port), flags);
    if (results.empty()) throw std::runtime_error("no address");
    const tcp::endpoint endpoint = results.begin()->endpoint();
    auto& acceptor = impl_->acceptor;
    acceptor.open(endpoint.protocol());
    acceptor.set_option(asio::socket_base::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
    impl_->bound = acceptor.local_endpoint();
  } catch (const std::exception& e) {
    throw std::runtime_error("admin listener " + config::format_endpoint(where) + ": " + e.what());
  }
  impl_->accept();
  impl_->expire_leases();
  if (impl_->store->has_files()) {
    impl_->watcher = std::make_shared<ConfigWatcher>(impl_->worker->context(), impl_->store);
    impl_->watcher->start();
  }
}

void AdminServer::stop() {
  std::vector<std::weak_ptr<AdminSession>> sessions;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) return;
    impl_->stopped = true;
    sessions.swap(impl_->sessions);
  }
  asio::dispatch(impl_->acceptor.get_executor(), [impl = impl_] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
  asio::post(impl_->io, [impl = impl_] { impl->lease_timer.cancel(); });
  if (impl_->watcher) impl_->watcher->stop();
  for (auto& weak : sessions) {
    if (auto session = weak.lock()) session->close();
  }
}

config::Endpoint AdminServer::local_endpoint() const {
  return config::Endpoint{impl_->bound.address().to_string(), impl_->bound.port()};
}

std::vector<std::string> AdminServer::reload() { return impl_->store->reload(); }

}  // namespace sluice::server
