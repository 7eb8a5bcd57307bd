// The gRPC adapter of the rate limit service: RateLimitRequest -> engine::RlsAsk, decided on the
// service's loop, Outcome -> RateLimitResponse (or an error status). Translation only; the
// decisions are the engine's.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <string>

#include "common/loop_clock.hpp"
#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "sluice/engine/loop.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::server::rls {

namespace pb = envoy::service::ratelimit::v3;

// Fills `response` from an RLS outcome (not kInvalid) for `descriptors` request descriptors.
void to_response(const engine::Outcome& out, int descriptors, pb::RateLimitResponse& response);

class Service final : public pb::RateLimitService::CallbackService {
 public:
  // Calls are decided on `io` (one thread runs it), with `loop` and `clock` of that loop.
  Service(boost::asio::io_context& io, engine::Loop& loop, const LoopClock& clock)
      : io_(io), loop_(loop), clock_(clock) {}

  grpc::ServerUnaryReactor* ShouldRateLimit(grpc::CallbackServerContext* context,
                                            const pb::RateLimitRequest* request,
                                            pb::RateLimitResponse* response) override;

  void collect_metrics(metrics::Sink& sink) const;

 private:
  struct Call;
  void run(const std::shared_ptr<Call>& call);
  void finish(const std::shared_ptr<Call>& call);

  boost::asio::io_context& io_;
  engine::Loop& loop_;
  const LoopClock& clock_;
  std::atomic<std::uint64_t> ok_{0};
  std::atomic<std::uint64_t> over_limit_{0};
  std::atomic<std::uint64_t> invalid_{0};
  std::atomic<std::uint64_t> failed_{0};  // exhausted or an internal error
  std::atomic<std::uint64_t> descriptors_ok_{0};
  std::atomic<std::uint64_t> descriptors_over_limit_{0};
};

}  // namespace sluice::server::rls
