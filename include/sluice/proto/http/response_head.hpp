// An HTTP/1.x response head scanned from raw bytes by hand: the gateway's fast path for what
// its upstreams answer, where Beast's general parser led the profile (docs/performance.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace sluice::proto::http {

// One header field as sent, its value without the whitespace around it (RFC 9112 §5).
struct HeadField {
  std::string_view name;
  std::string_view value;
};

// What a response head says: views into the bytes it was read from, so whoever fills one keeps
// those bytes alive and unmoved while it is used.
struct ResponseHead {
  int status = 0;
  unsigned version = 11;  // 10 or 11
  std::string_view reason;
  // The connection may carry another exchange once this response's body is read.
  bool keep_alive = false;
  std::optional<std::uint64_t> content_length;
  std::span<const HeadField> fields;

  // The value of the first field named `name` (case-insensitive), as a parser's find() gives.
  std::optional<std::string_view> find(std::string_view name) const;
};

// Whether a response carries a body (RFC 9112 §6.3): not an interim (1xx) one, 204, 304 or the
// answer to HEAD, whatever its fields say.
constexpr bool has_body(int status, bool head_request) {
  return !head_request && status / 100 != 1 && status != 204 && status != 304;
}

// How far a scan got.
enum class HeadScan {
  kDone,      // the head is whole and understood: head() and size() say what it is
  kNeedMore,  // valid so far: scan again from the start once more bytes are in
  kFallback,  // something the scanner does not take: leave the bytes to a full parser
};

// Takes only the heads whose framing it understands fully: HTTP/1.0 or 1.1, a final status
// (200-599), fields of strict syntax, and either exactly one Content-Length of digits or no body
// at all (204, 304, the answer to HEAD); no Transfer-Encoding. Anything else (chunked, a body to
// EOF, 1xx and 101, obs-fold, a bare LF, a character outside the grammar, a duplicate or odd
// Content-Length, a head over `max_bytes`, more than kMaxFields fields, a field name repeated
// after other fields, which Beast regroups) is kFallback, so a full parser sees the same bytes
// and decides as it would have without this scanner; what it takes, Beast takes alike.
class ResponseHeadScanner {
 public:
  static constexpr std::size_t kMaxFields = 64;

  // `bytes`: the response from its first byte. `head_request`: it answers HEAD (no body
  // whatever its fields say). `max_bytes`: the longest head taken, its last CRLF included.
  HeadScan scan(std::string_view bytes, bool head_request, std::size_t max_bytes);

  // After kDone: what the head says, and how many bytes of `bytes` it took.
  const ResponseHead& head() const { return head_; }
  std::size_t size() const { return size_; }

  // The head's bytes were copied from `from` to `to`: its views follow them.
  void moved(const char* from, const char* to);

 private:
  std::array<HeadField, kMaxFields> fields_;
  ResponseHead head_;
  std::size_t size_ = 0;
};

}  // namespace sluice::proto::http
