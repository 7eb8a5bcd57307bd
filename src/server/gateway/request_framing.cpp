// Request framing checks (request_framing.hpp).
#include "request_framing.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

namespace sluice::server::gateway {

namespace http = boost::beast::http;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_decimal(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The transfer codings of every Transfer-Encoding line, in order (a list may be split over
// several lines, RFC 9110 §5.3).
struct Codings {
  std::size_t total = 0;
  std::size_t chunked = 0;
  bool chunked_last = false;
  bool chunked_params = false;
  bool other = false;

  void add(std::string_view element) {
    element = trim(element);
    if (element.empty()) return;  // "a, , b": empty list elements do not count
    const std::string_view name = trim(element.substr(0, element.find(';')));
    ++total;
    chunked_last = boost::beast::iequals(name, "chunked");
    if (chunked_last) {
      ++chunked;
      chunked_params = chunked_params || name.size() != element.size();
    } else {
      other = true;
    }
  }
};

}  // namespace

FramingProblem check_framing(unsigned version, std::span<const std::string_view> content_lengths,
                             std::span<const std::string_view> transfer_encodings) {
  // nginx answers a repeated Content-Length 400 even when the values agree; so does sluice,
  // rather than guess which one an upstream would read.
  if (content_lengths.size() > 1) return {400, "more than one Content-Length"};
  if (content_lengths.size() == 1 && !is_decimal(trim(content_lengths[0]))) {
    return {400, "a Content-Length that is not one decimal number"};
  }
  if (transfer_encodings.empty()) return {};
  if (version < 11) return {400, "Transfer-Encoding on HTTP/1.0"};
  if (!content_lengths.empty()) return {400, "both Content-Length and Transfer-Encoding"};
  Codings codings;
  for (std::string_view value : transfer_encodings) {
    for (auto comma = value.find(','); comma != std::string_view::npos; comma = value.find(',')) {
      codings.add(value.substr(0, comma));
      value.remove_prefix(comma + 1);
    }
    codings.add(value);
  }
  if (codings.total == 0) return {400, "an empty Transfer-Encoding"};
  // RFC 9112 §6.3: chunked not last leaves the length unknown; the server MUST answer 400.
  if (codings.chunked > 1 || (codings.chunked == 1 && !codings.chunked_last)) {
    return {400, "chunked twice, or not the last transfer coding"};
  }
  if (codings.chunked_params) return {400, "parameters on chunked"};
  // RFC 9112 §6.1: a coding the server does not understand SHOULD get 501.
  if (codings.other) return {501, "a transfer coding other than chunked"};
  return {};
}

boost::system::error_code HeadScanner::scan(std::string_view bytes) {
  // The state in locals: the bytes are chars, which may alias the members, so a loop over the
  // members themselves would store and reload them at every byte.
  std::size_t at = seen_;
  std::size_t line = line_;
  bool first_line = first_line_;
  bool after_cr = after_cr_;
  bool done = done_;
  boost::system::error_code ec;
  for (; !done && at < bytes.size(); ++at) {
    const auto c = static_cast<unsigned char>(bytes[at]);
    if (c > 0x20 && c != 0x7f && !after_cr) {  // most bytes: visible, inside a line
      ++line;
      continue;
    }
    if (c == '\n') {
      if (!after_cr) {
        ec = http::error::bad_line_ending;
        break;
      }
      // A line of its CR alone is the empty line that ends the head.
      done = line == 1 && !first_line;
      first_line = false;
      line = 0;
      after_cr = false;
      continue;
    }
    if (after_cr) {  // CR not followed by LF
      ec = http::error::bad_line_ending;
      break;
    }
    if (c == '\r') {
      after_cr = true;
      ++line;
      continue;
    }
    // A field line that starts with whitespace continues the previous one (obs-fold); after
    // the request line it would be whitespace before the first field. Both are refused.
    if ((line == 0 && !first_line && (c == ' ' || c == '\t')) || (c < 0x20 && c != '\t') ||
        c == 0x7f) {
      ec = http::error::bad_value;
      break;
    }
    ++line;
  }
  seen_ = at;
  line_ = line;
  first_line_ = first_line;
  after_cr_ = after_cr;
  done_ = done;
  return ec;
}

}  // namespace sluice::server::gateway
