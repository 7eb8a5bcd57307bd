// RlsServer (sluice/server/rls_server.hpp): the gRPC server's lifecycle, and the event loop
// its calls are decided on.
#include "sluice/server/rls_server.hpp"

#include <grpcpp/grpcpp.h>

#include <boost/asio/executor_work_guard.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include "rls_service.hpp"
#include "sluice/clock/clocks.hpp"

namespace sluice::server {

namespace asio = boost::asio;

struct RlsServer::Impl {
  Impl(std::string listen, engine::Engine& engine, metrics::Registry* registry)
      : address(std::move(listen)),
        // Windows start where envoyproxy/ratelimit's do: at whole Unix seconds, minutes, ...
        clock(io, clock::system_clock()),
        loop(engine, io, registry, &clock),
        service(io, loop, clock) {
    if (registry != nullptr) {
      metrics = registry->add([this](metrics::Sink& sink) { service.collect_metrics(sink); });
    }
  }

  std::string address;
  asio::io_context io{1};
  LoopClock clock;
  engine::Loop loop;
  rls::Service service;
  std::unique_ptr<grpc::Server> server;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  int port = 0;
  metrics::Registry::Registration metrics;
};

RlsServer::RlsServer(std::string listen_addr, engine::Engine& engine, metrics::Registry* registry)
    : impl_(std::make_unique<Impl>(std::move(listen_addr), engine, registry)) {}

RlsServer::~RlsServer() {
  stop();
  impl_->metrics.reset();
}

void RlsServer::start() {
  if (impl_->server) return;
  // ":8081" is Sluice's "every address"; gRPC wants the host spelled out.
  const std::string address =
      impl_->address.starts_with(':') ? "[::]" + impl_->address : impl_->address;
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which would let a second server share a port in use
  // instead of failing to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &impl_->port);
  builder.RegisterService(&impl_->service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    impl_->server.reset();
    impl_->port = 0;
    throw std::runtime_error("cannot listen on " + impl_->address);
  }
  impl_->work.emplace(asio::make_work_guard(impl_->io));
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

void RlsServer::stop() {
  if (!impl_ || !impl_->server) return;
  // Calls in flight finish on the loop (their Redis answers within its timeout), then it stops.
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server->Wait();
  impl_->server.reset();
  impl_->work.reset();
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int RlsServer::port() const { return impl_->port; }

}  // namespace sluice::server
