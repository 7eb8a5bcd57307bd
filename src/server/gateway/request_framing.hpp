// Where a request ends, judged strictly (RFC 9112 §6): the checks that Boost.Beast's parser leaves
// out, so that sluice and the upstream behind it can never read one stream of bytes as two
// different sequences of requests (request smuggling). Pure functions of the head, for unit tests
// and fuzzers.
#pragma once

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <span>
#include <string_view>

namespace sluice::server::gateway {

// Why a head is refused: `status` 400 or 501 (0: the framing is sound) and a short reason for
// the log.
struct FramingProblem {
  int status = 0;
  std::string_view reason;
  explicit operator bool() const { return status != 0; }
};

// The framing fields of a request head: every Content-Length and Transfer-Encoding field value,
// in order, and the HTTP version (10, 11). Refused, as nginx 1.22 refuses them:
// - Transfer-Encoding on HTTP/1.0 (400), or beside Content-Length (400: a gateway must not
//   forward both, and the two readers would disagree);
// - chunked given twice or not last ("chunked, identity": 400, the length cannot be known);
// - any other coding ("xchunked", "gzip, chunked": 501, none is implemented);
// - more than one Content-Length field, or one that is not a plain decimal ("5, 5"): 400.
FramingProblem check_framing(unsigned version, std::span<const std::string_view> content_lengths,
                             std::span<const std::string_view> transfer_encodings);

// check_framing() over a parsed request head.
template <class Fields>
FramingProblem check_request_framing(const boost::beast::http::request_header<Fields>& req) {
  namespace http = boost::beast::http;
  // More fields than this are refused anyway (a second Content-Length is already one too many).
  constexpr std::size_t kMax = 8;
  std::string_view lengths[kMax];
  std::string_view codings[kMax];
  std::size_t n_lengths = 0;
  std::size_t n_codings = 0;
  for (const auto& f : req) {
    if (f.name() == http::field::content_length && n_lengths < kMax) {
      lengths[n_lengths++] = f.value();
    } else if (f.name() == http::field::transfer_encoding && n_codings < kMax) {
      codings[n_codings++] = f.value();
    }
  }
  return check_framing(req.version(), std::span(lengths, n_lengths), std::span(codings, n_codings));
}

// Scans a request head's raw bytes as they arrive, before the parser sees them, for what the
// parser accepts or cannot see once it has parsed: obsolete line folding (a field line starting
// with a space or tab, RFC 9112 §5.2, which Beast unfolds silently), a bare LF line ending, a
// NUL or another control byte. Stops at the empty line that ends the head, so the body is never
// judged. Each byte is looked at once, however the head is cut into reads.
class HeadScanner {
 public:
  // `bytes` is what the read buffer holds, from the first byte of the head not yet consumed by
  // the parser. Returns http::error::bad_value (obs-fold, a control byte) or
  // http::error::bad_line_ending (a bare LF) at the first fault, else success.
  boost::system::error_code scan(std::string_view bytes);
  // The parser consumed `n` bytes from the front of the buffer.
  void consumed(std::size_t n) { seen_ -= n < seen_ ? n : seen_; }
  // A new head begins at the front of the buffer.
  void reset() { *this = HeadScanner(); }
  bool done() const { return done_; }

 private:
  std::size_t seen_ = 0;    // bytes at the front of the buffer already scanned
  std::size_t line_ = 0;    // bytes on the current line so far, its CR included
  bool first_line_ = true;  // still on the request line
  bool after_cr_ = false;   // the previous byte was CR
  bool done_ = false;       // the head's empty line was seen
};

}  // namespace sluice::server::gateway
