// A route's `adaptive_concurrency:` block (sluice/config/adaptive_concurrency.hpp): each field
// read and checked where it is written; the limits against each other and the algorithm.
#include "readers.hpp"

namespace sluice::config::internal {

namespace {

constexpr std::int64_t kMaxLimit = 1'000'000;

// `priority`: a tier (0..9), or `header:NAME`.
void read_priority(Section& s, AdaptiveConcurrency& a) {
  auto t = s.text("priority");
  if (!t) return;
  if (t->starts_with("header:")) {
    const std::string name = t->substr(7);
    if (name.empty() || !is_token(name)) {
      s.fail("priority", quoted(*t) + ": header:NAME needs a header name");
      return;
    }
    a.priority_header = name;
    return;
  }
  auto n = core::parse_count(*t, "priority");
  if (!n || *n < 0 || *n > kTopTier) {
    s.fail("priority", quoted(*t) + " is not a tier (0 to " + std::to_string(kTopTier) +
                           ", higher shed last) or header:NAME");
    return;
  }
  a.priority = static_cast<int>(*n);
}

void check_limits(Section& s, const AdaptiveConcurrency& a) {
  const bool envoy = a.algorithm == AdaptiveAlgorithm::kEnvoyGradient;
  if (envoy && a.initial) {
    s.fail("initial",
           "envoy-gradient has no initial limit: it starts at min_limit, measuring the minimum "
           "RTT (docs/overload.md)");
  }
  if (a.algorithm == AdaptiveAlgorithm::kVegas && a.min_limit) {
    s.fail("min_limit", "vegas has no min_limit (its floor is 1): leave it out");
  }
  if (!envoy && a.min_rtt_interval) {
    s.fail("min_rtt_interval", "applies to envoy-gradient only: leave it out");
  }
  if (a.min_rtt_interval && *a.min_rtt_interval < core::kNanosPerMilli) {
    s.fail("min_rtt_interval", core::format_duration(*a.min_rtt_interval) + " is below 1ms");
  }
  if (a.min_limit && a.max_limit && *a.min_limit > *a.max_limit) {
    s.fail("min_limit",
           std::to_string(*a.min_limit) + " is above max_limit " + std::to_string(*a.max_limit));
  }
  if (a.initial && a.max_limit && *a.initial > *a.max_limit) {
    s.fail("initial",
           std::to_string(*a.initial) + " is above max_limit " + std::to_string(*a.max_limit));
  }
  if (a.initial && a.min_limit && *a.initial < *a.min_limit) {
    s.fail("initial",
           std::to_string(*a.initial) + " is below min_limit " + std::to_string(*a.min_limit));
  }
}

}  // namespace

std::optional<AdaptiveConcurrency> read_adaptive_concurrency(Section& route) {
  auto s = route.section("adaptive_concurrency",
                         {"algorithm", "min_limit", "max_limit", "initial", "min_rtt_interval",
                          "max_wait", "max_queue", "status", "body", "priority", "bypass"});
  if (!s) return std::nullopt;
  AdaptiveConcurrency a;
  if (auto v = s->choice("algorithm", kAdaptiveAlgorithms)) a.algorithm = *v;
  a.min_limit = s->number("min_limit", 1, kMaxLimit);
  a.max_limit = s->number("max_limit", 1, kMaxLimit);
  a.initial = s->number("initial", 1, kMaxLimit);
  a.min_rtt_interval = s->duration("min_rtt_interval");
  if (auto w = s->duration("max_wait")) a.max_wait = *w;
  if (auto q = s->number("max_queue", 1, kMaxAdaptiveQueue)) a.max_queue = *q;
  if (auto st = s->number("status", 200, 599)) a.status = static_cast<int>(*st);
  if (auto b = s->text("body")) a.body = *b;
  read_priority(*s, a);
  a.bypass = s->parsed_list<Cidr>("bypass", parse_cidr);
  check_limits(*s, a);
  return a;
}

}  // namespace sluice::config::internal
