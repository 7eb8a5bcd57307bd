// The gRPC adapter of the rate limit service: RateLimitRequest -> Request, Decider, Answer ->
// RateLimitResponse (or an error status). Translation only; the decisions are the Decider's.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "rls_decider.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::server::rls {

namespace pb = envoy::service::ratelimit::v3;

// Fills `response` from `answer` (its error fields are the caller's).
void to_response(const Answer& answer, pb::RateLimitResponse& response);

class Service final : public pb::RateLimitService::CallbackService {
 public:
  explicit Service(Decider& decider) : decider_(decider) {}

  grpc::ServerUnaryReactor* ShouldRateLimit(grpc::CallbackServerContext* context,
                                            const pb::RateLimitRequest* request,
                                            pb::RateLimitResponse* response) override;

  void collect_metrics(metrics::Sink& sink) const;

 private:
  Decider& decider_;
  std::atomic<std::uint64_t> ok_{0};
  std::atomic<std::uint64_t> over_limit_{0};
  std::atomic<std::uint64_t> invalid_{0};
  std::atomic<std::uint64_t> failed_{0};  // exhausted or an internal error
  std::atomic<std::uint64_t> descriptors_ok_{0};
  std::atomic<std::uint64_t> descriptors_over_limit_{0};
};

}  // namespace sluice::server::rls
