// Gateway (sluice/server/gateway.hpp): the worker loops and what they share.
#include "sluice/server/gateway.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "access_log.hpp"
#include "sluice/config/loader.hpp"
#include "worker.hpp"

namespace sluice::server {

namespace asio = boost::asio;
using asio::ip::tcp;

struct Gateway::Impl {
  Impl(engine::Engine& e, const core::Clock& wall) : engine(e), log(wall) {}
  engine::Engine& engine;
  gateway::AccessLog log;
  std::vector<std::unique_ptr<gateway::Worker>> workers;
  metrics::Registry::Registration metrics;  // after `workers`: unregistered before they go
  std::mutex mu;
  bool stopped = false;
};

namespace {

// The addresses to bind for an endpoint: "" is every address (IPv6 and IPv4 when the host has
// IPv6, else IPv4); a name is resolved once, at start-up.
std::vector<tcp::endpoint> bind_addresses(const config::Endpoint& listen) {
  if (listen.host.empty()) {
    return {tcp::endpoint(tcp::v6(), listen.port), tcp::endpoint(tcp::v4(), listen.port)};
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(listen.host, ec);
  if (!ec) return {tcp::endpoint(address, listen.port)};
  asio::io_context io;
  tcp::resolver resolver(io);
  std::vector<tcp::endpoint> out;
  for (const auto& r : resolver.resolve(listen.host, std::to_string(listen.port), ec)) {
    out.push_back(r.endpoint());
  }
  if (ec || out.empty()) {
    throw std::runtime_error("cannot listen on " + config::format_endpoint(listen) + ": " +
                             (ec ? ec.message() : "no address"));
  }
  return out;
}

}  // namespace

Gateway::Gateway(engine::Engine& engine, GatewayOptions options)
    : impl_(std::make_unique<Impl>(engine, *options.clocks.wall)) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t n = options.workers > 0 ? static_cast<std::size_t>(options.workers) : hw;
  std::string last_error = "no address";
  for (tcp::endpoint address : bind_addresses(options.listen)) {
    try {
      impl_->workers.push_back(std::make_unique<gateway::Worker>(
          engine, impl_->log, address, options.registry, *options.clocks.steady));
      // Port 0 picked a port: every other loop binds that one.
      address.port(impl_->workers.front()->local_endpoint().port());
      while (impl_->workers.size() < n) {
        impl_->workers.push_back(std::make_unique<gateway::Worker>(
            engine, impl_->log, address, options.registry, *options.clocks.steady));
      }
      if (options.registry != nullptr) {
        impl_->metrics = options.registry->add([impl = impl_.get()](metrics::Sink& sink) {
          for (const auto& w : impl->workers) gateway::collect_gateway_metrics(sink, w->stats());
        });
      }
      return;
    } catch (const boost::system::system_error& e) {
      impl_->workers.clear();
      last_error = e.code().message();
    }
  }
  throw std::runtime_error("cannot listen on " + config::format_endpoint(options.listen) + ": " +
                           last_error);
}

Gateway::~Gateway() { stop(); }

void Gateway::start() {
  for (auto& w : impl_->workers) w->start();
}

config::Endpoint Gateway::local_endpoint() const {
  const tcp::endpoint ep = impl_->workers.front()->local_endpoint();
  return config::Endpoint{ep.address().to_string(), ep.port()};
}

void Gateway::shutdown() {
  for (auto& w : impl_->workers) w->shutdown();
}

std::size_t Gateway::open_connections() const {
  std::size_t n = 0;
  for (const auto& w : impl_->workers) n += w->stats().open_connections.get();
  return n;
}

void Gateway::stop() {
  std::lock_guard lock(impl_->mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  for (auto& w : impl_->workers) w->stop();
}

}  // namespace sluice::server
