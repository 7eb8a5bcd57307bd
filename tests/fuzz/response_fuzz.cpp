// Fuzz target: the gateway's hand-written response head scanner against Boost.Beast's parser.
// Whenever the scanner takes a head, Beast must take the same bytes as a head too, with the same
// status, fields, Content-Length and keep-alive, and the head the gateway relays from either
// reading must be byte for byte the same: the fast path changes nothing a client can see.
//
// Input: byte 0: bit 0 the response answers HEAD; bit 1 a small head limit (64 + byte 1), so
// that the limit's edge is reached; the rest is what the upstream sends.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "proxy_head.hpp"
#include "response_view.hpp"
#include "sluice/proto/http/response_head.hpp"

namespace {

namespace gw = sluice::server::gateway;
namespace http = boost::beast::http;
using sluice::proto::http::HeadScan;
using sluice::proto::http::ResponseHead;
using sluice::proto::http::ResponseHeadScanner;

constexpr std::size_t kGatewayLimit = 32u << 10;  // the gateway's kMaxHeaderBytes

// The head as the gateway relays it to an HTTP/1.1 client (framing as relay_response picks it).
std::string relayed(const ResponseHead& h, bool head_request) {
  const bool has_body = !head_request && h.status != 204 && h.status != 304;
  std::string out;
  gw::append_relayed_response_head(out, h, "X-Extra: 1\r\n",
                                   has_body ? gw::Framing::kLength : gw::Framing::kNone,
                                   h.content_length.value_or(0), h.keep_alive, 11);
  return out;
}

void check_beast_agrees(const ResponseHeadScanner& s, std::string_view bytes, bool head_request,
                        std::size_t limit) {
  http::response_parser<http::empty_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(limit));
  parser.body_limit(boost::none);  // as the gateway's: a length is relayed, however large
  parser.eager(false);
  if (head_request) parser.skip(true);
  boost::system::error_code ec;
  const std::size_t used = parser.put(boost::asio::buffer(bytes.data(), s.size()), ec);
  SLUICE_FUZZ_CHECK(!ec && parser.is_header_done(), "Beast refuses a head the scanner took");
  SLUICE_FUZZ_CHECK(used == s.size(), "Beast's head is not the scanner's length");
  std::vector<sluice::proto::http::HeadField> fields;
  const ResponseHead b = gw::response_view(parser, fields);
  const ResponseHead& f = s.head();
  SLUICE_FUZZ_CHECK(b.status == f.status && b.version == f.version, "status line differs");
  SLUICE_FUZZ_CHECK(b.keep_alive == f.keep_alive, "keep-alive differs");
  SLUICE_FUZZ_CHECK(b.content_length == f.content_length, "Content-Length differs");
  SLUICE_FUZZ_CHECK(b.fields.size() == f.fields.size(), "field count differs");
  for (std::size_t i = 0; i < f.fields.size(); ++i) {
    SLUICE_FUZZ_CHECK(b.fields[i].name == f.fields[i].name, "field name differs");
    SLUICE_FUZZ_CHECK(b.fields[i].value == f.fields[i].value, "field value differs");
  }
  SLUICE_FUZZ_CHECK(relayed(b, head_request) == relayed(f, head_request), "relayed head differs");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const bool head_request = (data[0] & 1) != 0;
  const std::size_t limit = (data[0] & 2) != 0 ? 64 + data[1] : kGatewayLimit;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);
  ResponseHeadScanner s;
  const HeadScan scan = s.scan(bytes, head_request, limit);
  if (scan != HeadScan::kDone) return 0;
  SLUICE_FUZZ_CHECK(s.size() <= limit && s.size() <= bytes.size(), "head past the limit");
  check_beast_agrees(s, bytes, head_request, limit);
  // The same head arriving in two parts: the first part alone is never taken.
  for (const std::size_t cut : {s.size() - 1, s.size() / 2, std::size_t{data[1]} % s.size()}) {
    ResponseHeadScanner part;
    SLUICE_FUZZ_CHECK(part.scan(bytes.substr(0, cut), head_request, limit) == HeadScan::kNeedMore,
                      "a part of a head taken, or refused");
  }
  return 0;
}
