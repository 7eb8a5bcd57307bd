// RespServer (resp_server.hpp): listeners and event loops around Session.
#include "sluice/server/resp_server.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/listener_admission.hpp"
#include "resp_context.hpp"
#include "resp_session.hpp"
#include "sluice/config/loader.hpp"

namespace sluice::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace resp {

ServerState::ServerState(engine::Engine& e, const RespServerOptions& o, core::Nanos now)
    : engine(e), limits(o.limits), clock(*o.clocks.steady), started(now) {}

namespace {

using metrics::Family;
using metrics::Kind;

constexpr Family kConnections{"sluice_resp_connections", Kind::kGauge,
                              "Open RESP client connections."};
constexpr Family kAccepted{"sluice_resp_connections_total", Kind::kCounter,
                           "RESP client connections accepted."};
constexpr Family kCommands{"sluice_resp_commands_total", Kind::kCounter,
                           "RESP commands processed."};
constexpr Family kRejected{"sluice_resp_connections_rejected_total", Kind::kCounter,
                           "RESP client connections refused over resp.max_clients."};
constexpr Family kProtocolErrors{"sluice_resp_protocol_errors_total", Kind::kCounter,
                                 "RESP connections closed for a protocol error."};
constexpr Family kAuthFailures{
    "sluice_resp_auth_failures_total", Kind::kCounter,
    "RESP AUTHs that did not authenticate: reason wrong (user or password), or refused "
    "(not checked: the peer address is over resp.auth_failure_burst/auth_failure_rate)."};
constexpr Family kAuthClosed{"sluice_resp_auth_closed_total", Kind::kCounter,
                             "RESP connections closed at resp.max_auth_failures."};
constexpr Family kQueueRefused{
    "sluice_resp_queue_refused_total", Kind::kCounter,
    "Commands refused inside MULTI: past resp.max_queued_commands or resp.max_queued_bytes."};

}  // namespace

void collect_server_metrics(metrics::Sink& sink, const ServerState& s) {
  auto load = [](const auto& a) { return static_cast<double>(a.load(std::memory_order_relaxed)); };
  sink.add(kConnections, {}, load(s.connected));
  sink.add(kAccepted, {}, load(s.connections_received));
  sink.add(kRejected, {}, load(s.rejected_connections));
  sink.add(kCommands, {}, load(s.commands_processed));
  sink.add(kProtocolErrors, {}, load(s.protocol_errors));
  sink.add(kAuthFailures, {{"reason", "wrong"}}, load(s.auth_wrong));
  sink.add(kAuthFailures, {{"reason", "refused"}}, load(s.auth_refused));
  sink.add(kAuthClosed, {}, load(s.auth_closed));
  sink.add(kQueueRefused, {}, load(s.queue_refused));
}

namespace {

// One acceptor and the loop it runs on: an own io_context and thread, or the caller's.
class Listener {
 public:
  Listener(asio::io_context& io, std::shared_ptr<ServerState> state, const tcp::endpoint& at,
           metrics::Registry* metrics)
      : io_(io),
        state_(std::move(state)),
        parts_(std::make_unique<LoopParts>(state_->engine, io, metrics, state_->clock)),
        acceptor_(io),
        registry_(std::make_shared<SessionRegistry>()) {
    acceptor_.open(at.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    if (at.protocol() == tcp::v6()) acceptor_.set_option(asio::ip::v6_only(false));
    // Every loop binds the same port; the kernel spreads new connections over them.
    const int one = 1;
    if (::setsockopt(acceptor_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
      throw boost::system::system_error(errno, boost::system::system_category());
    }
    acceptor_.bind(at);
    acceptor_.listen(asio::socket_base::max_listen_connections);
    local_ = acceptor_.local_endpoint();
  }

  tcp::endpoint local_endpoint() const { return local_; }

  void start() { accept(); }

  // On the loop: stop accepting, close every connection.
  void close() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    retry_.cancel();
    std::vector<std::shared_ptr<Session>> open;
    {
      std::lock_guard<std::mutex> lock(registry_->mu);
      registry_->closed = true;
      for (auto& [p, weak] : registry_->sessions) {
        if (auto s = weak.lock()) open.push_back(std::move(s));
      }
    }
    for (auto& s : open) s->close();
  }

  asio::io_context& io() { return io_; }

 private:
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        if (state_->connected.load(std::memory_order_relaxed) >= max_clients()) {
          refuse_full(socket);
        } else {
          std::make_shared<Session>(state_, registry_, *parts_, std::move(socket))->start();
        }
        return accept();
      }
      if (accept_again_at_once(ec)) return accept();
      retry_.expires_after(kAcceptPause);
      retry_.async_wait([this](const boost::system::error_code& wait_ec) {
        if (!wait_ec && acceptor_.is_open()) accept();
      });
    });
  }

  // resp.max_clients of the loop's rules, so that a reload moves it.
  std::int64_t max_clients() {
    const auto& resp = parts_->loop.rules().resp;
    return resp ? resp->max_clients : config::RespSettings{}.max_clients;
  }

  // Redis's answer to a client over maxclients: one error line, then the connection closes.
  void refuse_full(tcp::socket& socket) {
    state_->rejected_connections.fetch_add(1, std::memory_order_relaxed);
    refuse_connection(socket, "-ERR max number of clients reached\r\n");
  }

  asio::io_context& io_;
  std::shared_ptr<ServerState> state_;
  std::unique_ptr<LoopParts> parts_;  // outlives its sessions: close() ends them first
  tcp::acceptor acceptor_;
  asio::steady_timer retry_{io_};
  std::shared_ptr<SessionRegistry> registry_;
  tcp::endpoint local_;
};

tcp::endpoint bind_address(const config::Endpoint& listen) {
  if (listen.host.empty()) return tcp::endpoint(tcp::v6(), listen.port);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(listen.host, ec);
  if (!ec) return tcp::endpoint(address, listen.port);
  asio::io_context io;
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(listen.host, std::to_string(listen.port), ec);
  if (ec || results.empty()) {
    throw std::runtime_error("cannot listen on " + config::format_endpoint(listen) + ": " +
                             (ec ? ec.message() : "no address"));
  }
  return results.begin()->endpoint();
}

}  // namespace
}  // namespace resp

struct RespServer::Impl {
  Impl(asio::io_context& shared, config::Endpoint at, engine::Engine& e, RespServerOptions o)
      : shared_io(shared), engine(e), listen(std::move(at)), options(std::move(o)) {}

  asio::io_context& shared_io;
  engine::Engine& engine;
  config::Endpoint listen;
  RespServerOptions options;
  std::shared_ptr<resp::ServerState> state;
  // Own loops (workers > 0): each io_context outlives its listener and its thread.
  std::vector<std::unique_ptr<asio::io_context>> ios;
  std::vector<std::unique_ptr<resp::Listener>> listeners;
  std::vector<std::thread> threads;
  tcp::endpoint local;
  std::mutex mu;
  bool started = false;
  bool stopped = false;
  metrics::Registry::Registration metrics;
};

RespServer::RespServer(asio::io_context& io, config::Endpoint listen, engine::Engine& engine,
                       RespServerOptions options)
    : impl_(std::make_unique<Impl>(io, std::move(listen), engine, std::move(options))) {}

RespServer::~RespServer() {
  stop();
  impl_->metrics.reset();
  // Listeners before their io_contexts: a listener's pending accept belongs to its loop.
  impl_->listeners.clear();
  impl_->ios.clear();
}

void RespServer::start() {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.started) return;
  m.state =
      std::make_shared<resp::ServerState>(m.engine, m.options, m.options.clocks.steady->now());
  tcp::endpoint at = resp::bind_address(m.listen);
  const std::size_t loops = m.options.workers > 0 ? static_cast<std::size_t>(m.options.workers) : 1;
  try {
    for (std::size_t i = 0; i < loops; ++i) {
      asio::io_context* io = &m.shared_io;
      if (m.options.workers > 0) {
        m.ios.push_back(std::make_unique<asio::io_context>(1));
        io = m.ios.back().get();
      }
      m.listeners.push_back(std::make_unique<resp::Listener>(*io, m.state, at, m.options.registry));
      at.port(m.listeners.front()->local_endpoint().port());  // port 0 chose one: share it
    }
  } catch (const boost::system::system_error& e) {
    m.listeners.clear();
    m.ios.clear();
    throw std::runtime_error("cannot listen on " + config::format_endpoint(m.listen) + ": " +
                             e.code().message());
  }
  m.local = m.listeners.front()->local_endpoint();
  {
    // Takes the engine's inline limit that counts AUTH failures now, before clients of the
    // decision API could fill every inline slot (auth_guard.cpp).
    const auto rules = m.engine.rules();
    const config::RespSettings resp = rules->resp.value_or(config::RespSettings{});
    engine::Outcome warm;
    m.engine.decide(engine::InlineAsk{resp.auth_failure_limit(), "resp-auth", 0, 0},
                    m.options.clocks.steady->now(), warm);
  }
  m.state->port = m.local.port();
  if (m.options.registry != nullptr) {
    m.metrics = m.options.registry->add(
        [state = m.state](metrics::Sink& sink) { resp::collect_server_metrics(sink, *state); });
  }
  for (auto& l : m.listeners) l->start();
  for (auto& io : m.ios) {
    m.threads.emplace_back([io = io.get()] {
      auto guard = asio::make_work_guard(*io);
      io->run();
    });
  }
  m.started = true;
}

void RespServer::stop() {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  if (!m.started || m.stopped) return;
  m.stopped = true;
  if (m.options.workers > 0) {
    for (auto& l : m.listeners) {
      asio::post(l->io(), [l = l.get()] { l->close(); });
    }
    // The closes run before the stop: one thread per loop runs its handlers in order.
    for (auto& io : m.ios) asio::post(*io, [io = io.get()] { io->stop(); });
    for (auto& t : m.threads) t.join();
    m.threads.clear();
  } else {
    // The caller's loop: closing happens when it runs (or, if it never runs again, the
    // sessions go with it; they hold what they use).
    for (auto& l : m.listeners) asio::post(l->io(), [l = l.get()] { l->close(); });
  }
}

config::Endpoint RespServer::local_endpoint() const {
  auto a = impl_->local.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  return config::Endpoint{a.to_string(), impl_->local.port()};
}

}  // namespace sluice::server
