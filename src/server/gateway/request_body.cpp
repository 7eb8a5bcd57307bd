// Request body reading policy (request_body.hpp).
#include "request_body.hpp"

#include <algorithm>
#include <limits>

namespace sluice::server::gateway {

ReadAhead read_ahead(std::optional<std::uint64_t> content_length, std::size_t buffer,
                     std::size_t piece) {
  if (buffer == 0) return {piece, false};
  if (!content_length) return {buffer, true};  // chunked: as much as fits
  if (*content_length > buffer) return {piece, false};
  return {static_cast<std::size_t>(*content_length), true};
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
