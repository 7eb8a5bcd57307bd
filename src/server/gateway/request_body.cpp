// Request body reading policy (request_body.hpp).
#include "request_body.hpp"

#include <algorithm>
#include <limits>

namespace sluice::server::gateway {

BodyPlan plan_body(bool request_buffering, const config::BodyLimits& limits, std::size_t piece) {
  if (!request_buffering || limits.max_buffered == 0) return {piece, piece, false};
  return {std::min(limits.buffer, limits.max_buffered), limits.max_buffered, true};
}

core::Nanos BodyPace::deadline() const {
  const core::Nanos next = last_ + gap_;
  if (min_rate_ == 0) return next;
  // The seconds of sending that the bytes received so far pay for, kept far from overflow
  // whatever the body's size.
  constexpr core::Nanos kFar = std::numeric_limits<core::Nanos>::max() / 4;
  const std::uint64_t seconds = received_ / min_rate_;
  if (seconds > static_cast<std::uint64_t>(kFar / core::kNanosPerSecond)) return next;
  const auto fraction = static_cast<core::Nanos>(static_cast<double>(received_ % min_rate_) * 1e9 /
                                                 static_cast<double>(min_rate_));
  const core::Nanos paid = static_cast<core::Nanos>(seconds) * core::kNanosPerSecond + fraction;
  return std::min(next, start_ + gap_ + paid);
}

}  // namespace sluice::server::gateway
