// A client's HTTP/2 frames read as they pass to gRPC (frame headers only), for the two things
// gRPC 1.51 does not bound on its own (stream_gate.hpp):
// - before the client acknowledges the server's SETTINGS, gRPC does not hold it to
//   SETTINGS_MAX_CONCURRENT_STREAMS, so the streams it opens until then are counted (at most
//   the cap, or 100 if that is more);
// - a stream the client resets at once no longer counts as open, while gRPC still has the call
//   to tear down ("rapid reset"), so the resets of each second are counted.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "sluice/core/time.hpp"

namespace sluice::server::rls {

class StreamWatch {
 public:
  enum class Verdict {
    kOk,
    kTooManyStreamsBeforeAck,  // more than max_streams_before_ack() opened before the ACK
    kTooManyResets,            // more than max_resets() streams reset within a second
  };

  // HTTP/2 clients that do not wait for the server's SETTINGS assume 100 concurrent streams
  // until they arrive (nghttp2's default, which Envoy's codecs follow); fewer would cut a
  // client that has done nothing wrong.
  static constexpr std::int64_t kAssumedBeforeSettings = 100;

  // `max_streams`: rls.max_concurrent_streams.
  explicit StreamWatch(std::int64_t max_streams)
      : before_ack_(std::max(max_streams, kAssumedBeforeSettings)) {}

  // The next bytes the client sent (the connection preface first), in order, at `now`. Once
  // not kOk, it stays so and nothing more is read.
  Verdict feed(std::span<const unsigned char> bytes, core::Nanos now);

  bool acknowledged() const { return acknowledged_; }
  // The highest stream opened while the verdict was kOk (GOAWAY's last-stream-id).
  std::uint32_t last_stream() const { return last_stream_; }
  std::int64_t max_streams_before_ack() const { return before_ack_; }
  std::int64_t max_resets() const { return 10 * before_ack_; }

 private:
  void frame_header(core::Nanos now);

  std::int64_t before_ack_;
  Verdict verdict_ = Verdict::kOk;
  bool acknowledged_ = false;
  std::size_t preface_left_ = 24;  // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
  std::array<unsigned char, 9> head_{};
  std::size_t head_have_ = 0;
  std::uint64_t payload_left_ = 0;
  std::uint32_t last_stream_ = 0;
  std::int64_t opened_before_ack_ = 0;
  core::Nanos second_ = 0;  // start of the second the resets are counted in
  std::int64_t resets_ = 0;
};

}  // namespace sluice::server::rls
