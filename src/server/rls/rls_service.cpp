// The gRPC adapter (rls_service.hpp).
#include "rls_service.hpp"

#include <chrono>
#include <exception>
#include <vector>

namespace sluice::server::rls {
namespace {

// The clock is read once per call, here at the edge. Wall-clock time: windows begin where
// envoyproxy/ratelimit's do (whole Unix seconds, minutes, hours, days).
core::Nanos unix_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<DescriptorView> views_of(const pb::RateLimitRequest& request) {
  std::vector<DescriptorView> out(static_cast<std::size_t>(request.descriptors_size()));
  for (int i = 0; i < request.descriptors_size(); ++i) {
    const auto& d = request.descriptors(i);
    auto& view = out[static_cast<std::size_t>(i)];
    view.entries.reserve(static_cast<std::size_t>(d.entries_size()));
    for (const auto& e : d.entries()) view.entries.push_back(Entry{e.key(), e.value()});
    if (d.has_limit()) {
      view.limit = Override{d.limit().requests_per_unit(), static_cast<int>(d.limit().unit())};
    }
  }
  return out;
}

pb::RateLimitResponse::Code code_of(Code c) {
  switch (c) {
    case Code::kOk:
      return pb::RateLimitResponse::OK;
    case Code::kOverLimit:
      return pb::RateLimitResponse::OVER_LIMIT;
    case Code::kUnknown:
      break;
  }
  return pb::RateLimitResponse::UNKNOWN;
}

}  // namespace

void to_response(const Answer& answer, pb::RateLimitResponse& response) {
  response.set_overall_code(code_of(answer.overall));
  for (const Status& s : answer.statuses) {
    auto* status = response.add_statuses();
    status->set_code(code_of(s.code));
    status->set_limit_remaining(s.remaining);
    if (s.limit) {
      auto* limit = status->mutable_current_limit();
      limit->set_requests_per_unit(s.limit->requests_per_unit);
      limit->set_unit(static_cast<pb::RateLimitResponse::RateLimit::Unit>(s.limit->unit));
      limit->set_name(std::string(s.limit->name));
      status->mutable_duration_until_reset()->set_seconds(s.reset_seconds);
    }
  }
}

grpc::ServerUnaryReactor* Service::ShouldRateLimit(grpc::CallbackServerContext* context,
                                                   const pb::RateLimitRequest* request,
                                                   pb::RateLimitResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  grpc::Status status;
  try {
    const std::vector<DescriptorView> views = views_of(*request);
    const Answer answer =
        decider_.decide(Request{request->domain(), views, request->hits_addend()}, unix_now());
    if (!answer.invalid.empty()) {
      invalid_.fetch_add(1, std::memory_order_relaxed);
      status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, answer.invalid);
    } else if (!answer.exhausted.empty()) {
      failed_.fetch_add(1, std::memory_order_relaxed);
      status = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, answer.exhausted);
    } else {
      to_response(answer, *response);
      (answer.overall == Code::kOverLimit ? over_limit_ : ok_)
          .fetch_add(1, std::memory_order_relaxed);
      for (const Status& s : answer.statuses) {
        (s.code == Code::kOverLimit ? descriptors_over_limit_ : descriptors_ok_)
            .fetch_add(1, std::memory_order_relaxed);
      }
    }
  } catch (const std::exception& e) {  // never let an exception cross into gRPC's threads
    failed_.fetch_add(1, std::memory_order_relaxed);
    status = grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
  reactor->Finish(status);
  return reactor;
}

void Service::collect_metrics(metrics::Sink& sink) const {
  static constexpr metrics::Family kCalls{"sluice_rls_calls_total", metrics::Kind::kCounter,
                                          "Envoy RLS ShouldRateLimit calls, by outcome."};
  static constexpr metrics::Family kDescriptors{
      "sluice_rls_descriptors_total", metrics::Kind::kCounter,
      "Descriptors answered by the Envoy RLS, by status code."};
  auto load = [](const std::atomic<std::uint64_t>& v) {
    return static_cast<double>(v.load(std::memory_order_relaxed));
  };
  sink.add(kCalls, {{"outcome", "ok"}}, load(ok_));
  sink.add(kCalls, {{"outcome", "over_limit"}}, load(over_limit_));
  sink.add(kCalls, {{"outcome", "invalid"}}, load(invalid_));
  sink.add(kCalls, {{"outcome", "error"}}, load(failed_));
  sink.add(kDescriptors, {{"code", "ok"}}, load(descriptors_ok_));
  sink.add(kDescriptors, {{"code", "over_limit"}}, load(descriptors_over_limit_));
}

}  // namespace sluice::server::rls
