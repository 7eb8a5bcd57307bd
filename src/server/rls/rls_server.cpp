// RlsServer (sluice/server/rls_server.hpp): the gRPC server's lifecycle around the Service.
#include "sluice/server/rls_server.hpp"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <stdexcept>

#include "rls_decider.hpp"
#include "rls_service.hpp"

namespace sluice::server {

struct RlsServer::Impl {
  Impl(std::string listen, const RlsConfig& config)
      : address(std::move(listen)), decider(config), service(decider) {}

  std::string address;
  rls::Decider decider;
  rls::Service service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

RlsServer::RlsServer(std::string listen_addr, RlsConfig config)
    : impl_(std::make_unique<Impl>(std::move(listen_addr), config)) {}

RlsServer::~RlsServer() { stop(); }

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
}

void RlsServer::stop() {
  if (!impl_ || !impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server->Wait();
  impl_->server.reset();
}

int RlsServer::port() const { return impl_->port; }

void RlsServer::collect_metrics(metrics::Sink& sink) const { impl_->service.collect_metrics(sink); }

}  // namespace sluice::server
