// StreamWatch (stream_watch.hpp): frame headers (RFC 9113 section 4.1) are read, payloads
// skipped, so a frame costs the same whatever it carries.
#include "stream_watch.hpp"

#include <algorithm>

namespace sluice::server::rls {
namespace {

constexpr unsigned char kHeaders = 0x1;
constexpr unsigned char kRstStream = 0x3;
constexpr unsigned char kSettings = 0x4;
constexpr unsigned char kAck = 0x1;

}  // namespace

StreamWatch::Verdict StreamWatch::feed(std::span<const unsigned char> bytes, core::Nanos now) {
  while (!bytes.empty() && verdict_ == Verdict::kOk) {
    std::size_t n = 0;
    if (preface_left_ > 0) {
      n = std::min(preface_left_, bytes.size());
      preface_left_ -= n;
    } else if (payload_left_ > 0) {
      n = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, bytes.size()));
      payload_left_ -= n;
    } else {
      n = std::min(head_.size() - head_have_, bytes.size());
      std::copy_n(bytes.begin(), n, head_.begin() + static_cast<std::ptrdiff_t>(head_have_));
      head_have_ += n;
      if (head_have_ == head_.size()) {
        head_have_ = 0;
        frame_header(now);
      }
    }
    bytes = bytes.subspan(n);
  }
  return verdict_;
}

void StreamWatch::frame_header(core::Nanos now) {
  payload_left_ = std::uint64_t{head_[0]} << 16 | std::uint64_t{head_[1]} << 8 | head_[2];
  const unsigned char type = head_[3];
  const unsigned char flags = head_[4];
  const std::uint32_t stream = (std::uint32_t{head_[5]} << 24 | std::uint32_t{head_[6]} << 16 |
                                std::uint32_t{head_[7]} << 8 | head_[8]) &
                               0x7fffffffu;
  if (type == kSettings && (flags & kAck) != 0) {
    // The client's own first SETTINGS has no ACK flag; its first ACK answers the server's first
    // SETTINGS, which is the first frame gRPC sends and carries the stream cap.
    acknowledged_ = true;
  } else if (type == kHeaders && stream > last_stream_) {  // a new stream: ids only grow
    if (!acknowledged_ && ++opened_before_ack_ > before_ack_) {
      verdict_ = Verdict::kTooManyStreamsBeforeAck;
      return;
    }
    last_stream_ = stream;
  } else if (type == kRstStream) {
    if (now - second_ >= core::kNanosPerSecond) {
      second_ = now;
      resets_ = 0;
    }
    if (++resets_ > max_resets()) verdict_ = Verdict::kTooManyResets;
  }
}

}  // namespace sluice::server::rls
