// AdminServer (sluice/server/admin_server.hpp): the listeners and their sessions.
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
#include "instance_beacon.hpp"
#include "shared_override_sync.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/control/control.hpp"
#include "sluice/engine/loop.hpp"
#include "stats_sampler.hpp"

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

  Impl(asio::io_context& context, engine::Engine& e, control::Control& c, AdminOptions opts,
       metrics::Registry& r)
      : io(context),
        engine(e),
        control(c),
        options(std::move(opts)),
        registry(r),
        clock(io, *options.clocks.steady),
        loop(std::make_unique<engine::Loop>(engine, io, &registry, &clock, options.clocks.steady)) {
    if (options.listen) {
      admin = std::make_unique<Listener>(io);
      admin->where = *options.listen;
    }
    if (options.check) {
      check = std::make_unique<Listener>(io);
      check->where = *options.check;
    }
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
  control::Control& control;
  AdminOptions options;
  metrics::Registry& registry;
  LoopClock clock;
  std::unique_ptr<engine::Loop> loop;
  std::shared_ptr<AccessKeeper> access;    // made at start(), once the admin address is known
  std::shared_ptr<AdminService> service;   // likewise
  std::shared_ptr<StatsSampler> sampler;   // the dashboard's live rates, with an admin listener
  std::shared_ptr<InstanceBeacon> beacon;  // this instance's heartbeat in a shared Redis
  std::shared_ptr<SharedOverrideSync> overrides;  // the Redis rules' shared overrides
  std::unique_ptr<Listener> admin;                // none with `admin: off`
  std::unique_ptr<Listener> check;                // the decision API on an address of its own
  std::mutex mutex;                               // each listener's sessions, stopped
  bool stopped = false;
};

AdminServer::AdminServer(asio::io_context& io, engine::Engine& engine, control::Control& control,
                         AdminOptions options, metrics::Registry& registry)
    : impl_(std::make_shared<Impl>(io, engine, control, std::move(options), registry)) {}

AdminServer::~AdminServer() {
  stop();
  // The loop's Redis sockets belong to io, which may outlive handlers that keep Impl alive.
  if (impl_->service) impl_->service->set_loop(nullptr, nullptr);
  impl_->loop.reset();
}

void AdminServer::start() {
  Impl& impl = *impl_;
  if (impl.admin) impl.prepare(*impl.admin, ListenerInfo::Kind::kAdmin);
  if (impl.check) impl.prepare(*impl.check, ListenerInfo::Kind::kCheck);
  // Before anything is bound: a listener that would serve rule changes to the network without
  // a token never opens, and no later rule set may take the token off it.
  std::optional<ListenerInfo> admin_info;
  if (impl.admin) admin_info = *impl.admin->info;
  control::ConfigStore& store = impl.control.store();
  impl.access =
      std::make_shared<AccessKeeper>(admin_info, impl.options.insecure, store.file_name());
  auto problems = store.add_guard(impl.access->guard());
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "\n") + p;
    throw AdminRefused(all);
  }
  impl.service = std::make_shared<AdminService>(impl.control.shared_store(), impl.access,
                                                impl.registry, impl.control.executor());
  // The decision API decides on this loop; rules kept in Redis go through its own store.
  impl.service->set_loop(impl.loop.get(), &impl.clock);
  // With or without an admin listener: an instance that serves no API still applies them.
  impl.overrides = std::make_shared<SharedOverrideSync>(
      impl.io, *impl.loop, impl.control.shared_store(), impl.control.executor());
  impl.service->set_shared_overrides(impl.overrides);
  if (impl.admin && impl.options.clocks.wall != nullptr) {
    impl.sampler = std::make_shared<StatsSampler>(impl.io.get_executor(), impl.registry,
                                                  *impl.options.clocks.wall);
    impl.service->set_dashboard(impl.sampler, impl.options.clocks.wall);
    impl.beacon = std::make_shared<InstanceBeacon>(impl.io, *impl.loop, impl.control.shared_store(),
                                                   *impl.options.clocks.wall);
    impl.service->set_beacon(impl.beacon);
  }
  for (Impl::Listener* l : {impl.admin.get(), impl.check.get()}) {
    if (l != nullptr) impl.bind(*l);
  }
  for (Impl::Listener* l : {impl.admin.get(), impl.check.get()}) {
    if (l != nullptr) impl.accept(*l);
  }
  if (impl.beacon) impl.beacon->start();
  impl.overrides->start();
}

void AdminServer::stop() {
  std::vector<std::weak_ptr<AdminSession>> sessions;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) return;
    impl_->stopped = true;
    if (impl_->sampler) impl_->sampler->stop();
    if (impl_->beacon) impl_->beacon->stop();
    if (impl_->overrides) impl_->overrides->stop();
    for (Impl::Listener* l : {impl_->admin.get(), impl_->check.get()}) {
      if (l == nullptr) continue;
      sessions.insert(sessions.end(), l->sessions.begin(), l->sessions.end());
      l->sessions.clear();
    }
  }
  for (Impl::Listener* l : {impl_->admin.get(), impl_->check.get()}) {
    if (l != nullptr) impl_->close(*l);
  }
  for (auto& weak : sessions) {
    if (auto session = weak.lock()) session->close();
  }
}

namespace {
config::Endpoint endpoint_of(const ListenerInfo& info) {
  return config::Endpoint{info.bound.to_string(), info.port};
}
}  // namespace

std::optional<config::Endpoint> AdminServer::local_endpoint() const {
  if (!impl_->admin) return std::nullopt;
  return endpoint_of(*impl_->admin->info);
}

std::optional<config::Endpoint> AdminServer::check_endpoint() const {
  if (!impl_->check) return std::nullopt;
  return endpoint_of(*impl_->check->info);
}

}  // namespace sluice::server
