// AdminServer (sluice/server/admin_server.hpp): the listeners, their sessions and the watcher.
#include "sluice/server/admin_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "admin_access.hpp"
#include "admin_service.hpp"
#include "admin_session.hpp"
#include "common/listener_admission.hpp"
#include "common/loop_clock.hpp"
#include "config_store.hpp"
#include "config_watcher.hpp"
#include "config_worker.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/loop.hpp"

namespace sluice::server {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

std::string listener_name(ListenerInfo::Kind kind) {
  return kind == ListenerInfo::Kind::kAdmin ? "admin listener " : "check listener ";
}

std::size_t max_connections(ListenerInfo::Kind kind) {
  return kind == ListenerInfo::Kind::kAdmin ? kMaxAdminConnections : kMaxCheckConnections;
}

// A connection over the listener's cap: a 503 saying so, then the close.
void refuse_busy(tcp::socket& socket, std::size_t limit) {
  const std::string body =
      "too many connections to this listener (limit " + std::to_string(limit) + ")\n";
  refuse_connection(socket,
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                    "Content-Length: " +
                        std::to_string(body.size()) +
                        "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body);
}

// The address a listener binds: the first the resolver gives for the config's host.
tcp::endpoint resolve(asio::io_context& io, const config::Endpoint& where) {
  tcp::resolver resolver(io);
  const auto flags = tcp::resolver::passive | tcp::resolver::numeric_service;
  auto results = resolver.resolve(where.host.empty() ? std::string("0.0.0.0") : where.host,
                                  std::to_string(where.port), flags);
  if (results.empty()) throw std::runtime_error("no address");
  return results.begin()->endpoint();
}

}  // namespace

struct AdminServer::Impl : std::enable_shared_from_this<Impl> {
  // One bound address and what it serves.
  struct Listener {
    explicit Listener(asio::io_context& io)
        : acceptor(asio::make_strand(io)), retry(acceptor.get_executor()) {}
    config::Endpoint where;
    tcp::acceptor acceptor;
    asio::steady_timer retry;  // the pause after accept() ran out of descriptors
    std::shared_ptr<const ListenerInfo> info;
    std::vector<std::weak_ptr<AdminSession>> sessions;  // under Impl::mutex
  };

  Impl(asio::io_context& context, engine::Engine& e, AdminOptions opts, metrics::Registry& registry)
      : io(context),
        engine(e),
        options(std::move(opts)),
        worker(std::make_unique<ConfigWorker>()),
        store(std::make_shared<ConfigStore>(engine, options.config_path, options.rls_files,
                                            options.max_config_size)),
        service(std::make_shared<AdminService>(store, registry, worker->executor())),
        clock(io),
        loop(std::make_unique<engine::Loop>(engine, io, &registry, &clock)),
        lease_timer(io),
        admin(io) {
    admin.where = options.listen;
    if (options.check) {
      check = std::make_unique<Listener>(io);
      check->where = *options.check;
    }
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

  // Resolves the listener's address; what serve() will bind.
  void prepare(Listener& l, ListenerInfo::Kind kind) {
    tcp::endpoint endpoint;
    try {
      endpoint = resolve(io, l.where);
    } catch (const std::exception& e) {
      throw std::runtime_error(listener_name(kind) + config::format_endpoint(l.where) + ": " +
                               e.what());
    }
    auto info = std::make_shared<ListenerInfo>();
    info->kind = kind;
    info->bound = endpoint.address();
    info->port = endpoint.port();
    info->configured_host = l.where.host;
    l.info = std::move(info);
  }

  void bind(Listener& l) {
    try {
      const tcp::endpoint endpoint(l.info->bound, l.info->port);
      l.acceptor.open(endpoint.protocol());
      l.acceptor.set_option(asio::socket_base::reuse_address(true));
      l.acceptor.bind(endpoint);
      l.acceptor.listen(asio::socket_base::max_listen_connections);
      // The chosen port when it was 0 (tests), for local_endpoint() and the exposure message.
      auto info = std::make_shared<ListenerInfo>(*l.info);
      info->port = l.acceptor.local_endpoint().port();
      l.info = std::move(info);
    } catch (const std::exception& e) {
      throw std::runtime_error(listener_name(l.info->kind) + config::format_endpoint(l.where) +
                               ": " + e.what());
    }
  }

  void accept(Listener& l) {
    l.acceptor.async_accept(
        asio::make_strand(io),
        [self = shared_from_this(), &l](const boost::system::error_code& ec, tcp::socket socket) {
          if (ec == asio::error::operation_aborted || !l.acceptor.is_open()) return;
          if (!ec || accept_again_at_once(ec)) {
            if (!ec) self->open(l, std::move(socket));
            self->accept(l);
            return;
          }
          l.retry.expires_after(kAcceptPause);
          l.retry.async_wait([self, &l](const boost::system::error_code& wait_ec) {
            if (!wait_ec && l.acceptor.is_open()) self->accept(l);
          });
        });
  }

  void open(Listener& l, tcp::socket socket) {
    std::shared_ptr<AdminSession> session;
    {
      std::lock_guard lock(mutex);
      if (stopped) return;
      std::erase_if(l.sessions, [](const auto& weak) { return weak.expired(); });
      if (l.sessions.size() >= max_connections(l.info->kind)) {
        refuse_busy(socket, max_connections(l.info->kind));
        return;
      }
      session = std::make_shared<AdminSession>(std::move(socket), service, l.info);
      l.sessions.push_back(session);
    }
    session->start();
  }

  void close(Listener& l) {
    asio::dispatch(l.acceptor.get_executor(), [self = shared_from_this(), &l] {
      boost::system::error_code ignored;
      l.acceptor.close(ignored);
      l.retry.cancel();
    });
  }

  asio::io_context& io;
  engine::Engine& engine;
  AdminOptions options;
  std::unique_ptr<ConfigWorker> worker;  // reset by ~AdminServer, never on its own thread
  std::shared_ptr<ConfigStore> store;
  std::shared_ptr<AdminService> service;
  LoopClock clock;
  std::unique_ptr<engine::Loop> loop;
  asio::steady_timer lease_timer;
  std::shared_ptr<ConfigWatcher> watcher;
  Listener admin;
  std::unique_ptr<Listener> check;  // the decision API on an address of its own
  std::mutex mutex;                 // each listener's sessions, stopped
  bool stopped = false;
};

AdminServer::AdminServer(asio::io_context& io, engine::Engine& engine, AdminOptions options,
                         metrics::Registry& registry)
    : impl_(std::make_shared<Impl>(io, engine, std::move(options), registry)) {}

AdminServer::~AdminServer() {
  stop();
  // The watcher's timer and signal set belong to the config thread's context: gone before it,
  // even while a handler on io still holds Impl.
  impl_->watcher.reset();
  // Joins the config thread (a reload in progress finishes first); the jobs it drops release
  // what they hold here, on this thread.
  impl_->worker.reset();
  // The loop's Redis sockets belong to io, which may outlive handlers that keep Impl alive.
  impl_->service->set_loop(nullptr, nullptr);
  impl_->loop.reset();
}

void AdminServer::start() {
  Impl& impl = *impl_;
  impl.prepare(impl.admin, ListenerInfo::Kind::kAdmin);
  if (impl.check) impl.prepare(*impl.check, ListenerInfo::Kind::kCheck);
  // Before anything is bound: a listener that would serve rule changes to the network without
  // a token never opens.
  auto problems = impl.store->start_access(*impl.admin.info, impl.options.insecure);
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "\n") + p;
    throw AdminRefused(all);
  }
  impl.bind(impl.admin);
  if (impl.check) impl.bind(*impl.check);
  impl.accept(impl.admin);
  if (impl.check) impl.accept(*impl.check);
  impl.expire_leases();
  if (impl.store->has_files()) {
    impl.watcher = std::make_shared<ConfigWatcher>(impl.worker->context(), impl.store);
    impl.watcher->start();
  }
}

void AdminServer::stop() {
  std::vector<std::weak_ptr<AdminSession>> sessions;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) return;
    impl_->stopped = true;
    sessions.swap(impl_->admin.sessions);
    if (impl_->check) {
      sessions.insert(sessions.end(), impl_->check->sessions.begin(), impl_->check->sessions.end());
      impl_->check->sessions.clear();
    }
  }
  impl_->close(impl_->admin);
  if (impl_->check) impl_->close(*impl_->check);
  asio::post(impl_->io, [impl = impl_] { impl->lease_timer.cancel(); });
  if (impl_->watcher) impl_->watcher->stop();
  for (auto& weak : sessions) {
    if (auto session = weak.lock()) session->close();
  }
}

namespace {
config::Endpoint endpoint_of(const ListenerInfo& info) {
  return config::Endpoint{info.bound.to_string(), info.port};
}
}  // namespace

config::Endpoint AdminServer::local_endpoint() const { return endpoint_of(*impl_->admin.info); }

std::optional<config::Endpoint> AdminServer::check_endpoint() const {
  if (!impl_->check) return std::nullopt;
  return endpoint_of(*impl_->check->info);
}

std::vector<std::string> AdminServer::reload() { return impl_->store->reload(); }

}  // namespace sluice::server
