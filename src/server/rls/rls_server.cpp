// RlsServer (sluice/server/rls_server.hpp): the gRPC server's lifecycle, the event loop its
// calls are decided on, and the gate its connections come in through (stream_gate.hpp).
#include "sluice/server/rls_server.hpp"

#include <grpcpp/grpcpp.h>
#include <grpcpp/server_posix.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <charconv>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include "rls_service.hpp"
#include "stream_gate.hpp"

namespace sluice::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// "HOST:PORT", "[V6]:PORT" or ":PORT" (every address, IPv6 and IPv4); port 0 picks one. A host
// name is resolved once, here.
tcp::endpoint bind_address(const std::string& text) {
  const auto colon = text.rfind(':');
  unsigned port = 0;
  const char* end = text.data() + text.size();
  if (colon == std::string::npos ||
      std::from_chars(text.data() + colon + 1, end, port).ptr != end || port > 65535) {
    throw std::runtime_error("cannot listen on " + text + ": expected HOST:PORT");
  }
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto p = static_cast<std::uint16_t>(port);
  if (host.empty()) return tcp::endpoint(tcp::v6(), p);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, p);
  asio::io_context io;
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) {
    throw std::runtime_error("cannot listen on " + text + ": " +
                             (ec ? ec.message() : "no address"));
  }
  return results.begin()->endpoint();
}

constexpr metrics::Family kCut{
    "sluice_rls_connections_cut_total", metrics::Kind::kCounter,
    "RLS connections closed for opening more than rls.max_concurrent_streams streams before "
    "acknowledging the server's SETTINGS."};

}  // namespace

struct RlsServer::Impl {
  Impl(std::string listen, engine::Engine& e, metrics::Registry* registry, core::Clocks c)
      : address(std::move(listen)),
        engine(e),
        clocks(c),
        // Windows start where envoyproxy/ratelimit's do: at whole Unix seconds, minutes, ...
        clock(io, *clocks.wall),
        loop(e, io, registry, &clock, clocks.steady),  // timed with the steady clock
        service(io, loop, clock) {
    if (registry != nullptr) {
      metrics = registry->add([this](metrics::Sink& sink) {
        service.collect_metrics(sink);
        sink.add(kCut, {}, static_cast<double>(cut.load(std::memory_order_relaxed)));
      });
    }
  }

  std::string address;
  engine::Engine& engine;
  core::Clocks clocks;
  asio::io_context io{1};
  LoopClock clock;
  engine::Loop loop;
  rls::Service service;
  std::unique_ptr<grpc::Server> server;
  std::atomic<std::uint64_t> cut{0};  // the gate's count, kept here for the metrics
  std::unique_ptr<rls::StreamGate> gate;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  int port = 0;
  metrics::Registry::Registration metrics;
};

RlsServer::RlsServer(std::string listen_addr, engine::Engine& engine, metrics::Registry* registry,
                     core::Clocks clocks)
    : impl_(std::make_unique<Impl>(std::move(listen_addr), engine, registry, clocks)) {}

RlsServer::~RlsServer() {
  stop();
  impl_->metrics.reset();
}

void RlsServer::start() {
  if (impl_->server) return;
  const auto rules = impl_->engine.rules();
  const auto& rls = rules->rls;
  const std::int64_t streams =
      rls ? rls->max_concurrent_streams : config::RlsSettings{}.max_concurrent_streams;
  try {
    impl_->gate = std::make_unique<rls::StreamGate>(bind_address(impl_->address), streams,
                                                    impl_->cut, *impl_->clocks.steady);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("cannot listen on " + impl_->address + ": " + e.what());
  }
  // No listening port of gRPC's own: connections come from the gate, one socketpair each.
  grpc::ServerBuilder builder;
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, static_cast<int>(streams));
  builder.RegisterService(&impl_->service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server) {
    impl_->gate.reset();
    throw std::runtime_error("cannot start the gRPC server for " + impl_->address);
  }
  impl_->port = impl_->gate->port();
  impl_->work.emplace(asio::make_work_guard(impl_->io));
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
  impl_->gate->start(
      [server = impl_->server.get()](int fd) { grpc::AddInsecureChannelFromFd(server, fd); });
}

void RlsServer::stop() {
  if (!impl_ || !impl_->server) return;
  // Calls in flight finish on the loop (their Redis answers within its timeout), then it stops;
  // the gate forwards their answers until gRPC has closed its ends.
  impl_->gate->stop_handoffs();
  const std::chrono::system_clock::time_point now(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(impl_->clocks.wall->now())));
  impl_->server->Shutdown(now + std::chrono::seconds(1));
  impl_->server->Wait();
  impl_->gate->stop();
  impl_->server.reset();
  impl_->work.reset();
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int RlsServer::port() const { return impl_->port; }

}  // namespace sluice::server
