// sluice::Limit (sluice/limit.hpp): a spec parsed once. The typed factories render the spec
// text and parse it, so there is one reader of the language and one set of checks and errors.
#include <charconv>
#include <string>

#include "limit_impl.hpp"
#include "sluice/core/rate.hpp"
#include "sluice/core/time.hpp"

namespace sluice {
namespace {

std::string rate_text(Rate r) {
  return core::format_rate(core::Rate{r.count, static_cast<core::Nanos>(r.period.count())});
}

std::string duration_text(Duration d) {
  return core::format_duration(static_cast<core::Nanos>(d.count()));
}

// The shortest plain decimal that reads back as `v` ("3", "2.5"): the spec's decimal syntax
// has no exponent, so fixed notation.
std::string decimal_text(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : std::string("invalid");
}

}  // namespace

Limit::Limit(std::string_view spec) {
  std::string error;
  auto parsed = parse(spec, &error);
  if (!parsed) throw LimitError(error);
  impl_ = std::move(parsed->impl_);
}

std::optional<Limit> Limit::parse(std::string_view spec, std::string* error) {
  auto parsed = spec::parse_limit_spec(spec);
  if (!parsed) {
    if (error != nullptr) *error = parsed.error();
    return std::nullopt;
  }
  return Limit(std::make_shared<const Impl>(Impl{std::move(parsed).value()}));
}

Limit Limit::token_bucket(Rate rate, std::int64_t burst) {
  return Limit("token-bucket:rate=" + rate_text(rate) + ",burst=" + std::to_string(burst));
}

Limit Limit::gcra(Rate rate, std::int64_t burst) {
  return Limit("gcra:rate=" + rate_text(rate) + ",burst=" + std::to_string(burst));
}

Limit Limit::leaky_bucket(Rate rate, std::int64_t burst, std::int64_t delay) {
  return Limit("leaky-bucket:rate=" + rate_text(rate) + ",burst=" + std::to_string(burst) +
               ",delay=" + std::to_string(delay));
}

Limit Limit::leaky_bucket_nodelay(Rate rate, std::int64_t burst) {
  return Limit("leaky-bucket:rate=" + rate_text(rate) + ",burst=" + std::to_string(burst) +
               ",nodelay=1");
}

Limit Limit::fixed_window(std::int64_t limit, Duration window) {
  return Limit("fixed-window:limit=" + std::to_string(limit) + ",window=" + duration_text(window));
}

Limit Limit::sliding_window(std::int64_t limit, Duration window) {
  return Limit("sliding-window:limit=" + std::to_string(limit) +
               ",window=" + duration_text(window));
}

Limit Limit::sliding_log(std::int64_t limit, Duration window) {
  return Limit("sliding-log:limit=" + std::to_string(limit) + ",window=" + duration_text(window));
}

Limit Limit::smooth_bursty(Rate rate, Duration max_burst) {
  return Limit("smooth-bursty:rate=" + rate_text(rate) + ",max-burst=" + duration_text(max_burst));
}

Limit Limit::smooth_warmup(Rate rate, Duration warmup, double cold_factor) {
  return Limit("smooth-warmup:rate=" + rate_text(rate) + ",warmup=" + duration_text(warmup) +
               ",cold-factor=" + decimal_text(cold_factor));
}

Limit Limit::queue(Rate rate, Duration max_wait) {
  return Limit("queue:rate=" + rate_text(rate) + ",max-wait=" + duration_text(max_wait));
}

const std::string& Limit::spec() const { return impl_->spec.canonical; }

const std::string& Limit::algorithm() const { return impl_->spec.algorithm; }

}  // namespace sluice
