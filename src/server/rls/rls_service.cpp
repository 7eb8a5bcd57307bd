// The gRPC adapter (rls_service.hpp).
#include "rls_service.hpp"

#include <boost/asio/post.hpp>
#include <exception>
#include <limits>
#include <vector>

namespace sluice::server::rls {
namespace {

constexpr std::uint32_t kMaxRemaining = std::numeric_limits<std::uint32_t>::max();

pb::RateLimitResponse::Code code_of(bool over) {
  return over ? pb::RateLimitResponse::OVER_LIMIT : pb::RateLimitResponse::OK;
}

}  // namespace

// One call in flight: gRPC's request and response, the engine's views of the request (they
// point into `request`) and the outcome, kept until the reactor finishes.
struct Service::Call {
  grpc::ServerUnaryReactor* reactor;
  const pb::RateLimitRequest* request;
  pb::RateLimitResponse* response;
  std::vector<std::vector<engine::RlsEntry>> entries;
  std::vector<engine::RlsDescriptorView> descriptors;
  engine::Outcome outcome;
};

void to_response(const engine::Outcome& out, int descriptors, pb::RateLimitResponse& response) {
  response.set_overall_code(code_of(out.verdict == engine::Verdict::kDeny));
  std::vector<const engine::Applied*> by_descriptor(static_cast<std::size_t>(descriptors), nullptr);
  for (const engine::Applied& a : out.applied) {
    if (a.item < by_descriptor.size()) by_descriptor[a.item] = &a;
  }
  for (const engine::Applied* a : by_descriptor) {
    auto* status = response.add_statuses();
    if (a == nullptr) {  // no limit applies: OK, no current limit
      status->set_code(pb::RateLimitResponse::OK);
      continue;
    }
    const engine::LimitView& limit = a->limit;
    if (limit.unlimited) {
      status->set_code(pb::RateLimitResponse::OK);
      status->set_limit_remaining(kMaxRemaining);
      continue;
    }
    const core::Decision& d = a->decision;
    // A shadow-mode limit reports its numbers but never refuses (envoyproxy/ratelimit: OK).
    status->set_code(code_of(!d.allowed && a->enforced));
    status->set_limit_remaining(static_cast<std::uint32_t>(
        std::clamp<std::int64_t>(d.remaining, 0, static_cast<std::int64_t>(kMaxRemaining))));
    auto* current = status->mutable_current_limit();
    const config::RlsRateLimit& rate = *limit.rls;
    current->set_requests_per_unit(rate.requests_per_unit);
    current->set_unit(static_cast<pb::RateLimitResponse::RateLimit::Unit>(rate.unit));
    current->set_name(rate.name);
    // envoyproxy/ratelimit reports whole seconds (unit - now % unit over Unix seconds); the
    // ceiling of the engine's nanosecond reset gives the same number for its windows.
    status->mutable_duration_until_reset()->set_seconds(core::ceil_seconds(d.reset_after));
  }
}

grpc::ServerUnaryReactor* Service::ShouldRateLimit(grpc::CallbackServerContext* context,
                                                   const pb::RateLimitRequest* request,
                                                   pb::RateLimitResponse* response) {
  auto call = std::make_shared<Call>();
  call->reactor = context->DefaultReactor();
  call->request = request;
  call->response = response;
  call->entries.resize(static_cast<std::size_t>(request->descriptors_size()));
  for (int i = 0; i < request->descriptors_size(); ++i) {
    const auto& d = request->descriptors(i);
    auto& entries = call->entries[static_cast<std::size_t>(i)];
    entries.reserve(static_cast<std::size_t>(d.entries_size()));
    for (const auto& e : d.entries()) entries.push_back(engine::RlsEntry{e.key(), e.value()});
    engine::RlsDescriptorView view{entries, std::nullopt};
    if (d.has_limit()) {
      view.limit =
          engine::RlsOverride{d.limit().requests_per_unit(), static_cast<int>(d.limit().unit())};
    }
    call->descriptors.push_back(view);
  }
  grpc::ServerUnaryReactor* reactor = call->reactor;
  boost::asio::post(io_, [this, call] { run(call); });
  return reactor;
}

void Service::run(const std::shared_ptr<Call>& call) {
  try {
    const engine::RlsAsk ask{call->request->domain(), call->descriptors,
                             call->request->hits_addend()};
    if (loop_.decide(ask, clock_.now(), call->outcome) == engine::Progress::kPending) {
      loop_.async_complete(call->outcome, [this, call] { finish(call); });
      return;
    }
    finish(call);
  } catch (const std::exception& e) {  // never let an exception cross into gRPC
    failed_.fetch_add(1, std::memory_order_relaxed);
    call->reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, e.what()));
  }
}

void Service::finish(const std::shared_ptr<Call>& call) {
  const engine::Outcome& out = call->outcome;
  grpc::Status status;
  if (out.verdict == engine::Verdict::kInvalid) {
    // The service's own resources (the override tables) are an error; a request over
    // rls.max_descriptors is the caller's, refused with the code of gRPC's own size caps.
    const bool exhausted = out.error_kind == engine::ErrorKind::kExhausted;
    const bool too_big = out.error_kind == engine::ErrorKind::kTooManyDescriptors;
    (exhausted ? failed_ : invalid_).fetch_add(1, std::memory_order_relaxed);
    status = grpc::Status(exhausted || too_big ? grpc::StatusCode::RESOURCE_EXHAUSTED
                                               : grpc::StatusCode::INVALID_ARGUMENT,
                          out.error);
  } else {
    to_response(out, call->request->descriptors_size(), *call->response);
    (out.verdict == engine::Verdict::kDeny ? over_limit_ : ok_)
        .fetch_add(1, std::memory_order_relaxed);
    for (const auto& s : call->response->statuses()) {
      (s.code() == pb::RateLimitResponse::OVER_LIMIT ? descriptors_over_limit_ : descriptors_ok_)
          .fetch_add(1, std::memory_order_relaxed);
    }
  }
  loop_.release(call->outcome);
  call->reactor->Finish(status);
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
