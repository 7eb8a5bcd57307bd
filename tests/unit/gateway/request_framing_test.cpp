// Request framing as the gateway judges it: Beast's parser, the raw-byte HeadScanner in front of
// it and check_request_framing() after it, fed the way a socket would feed them. Every head that
// two readers could delimit differently is refused with the status nginx 1.22 answers.
#include "request_framing.hpp"

#include <gtest/gtest.h>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <string>
#include <vector>

namespace sluice::server::gateway {
namespace {

namespace http = boost::beast::http;

// The status the gateway answers a request made of `bytes` (0: served), fed `step` bytes at a
// time as reads would bring them: the parser consumes what it can of the buffer, the scanner
// sees every byte first.
int judge(std::string_view bytes, std::size_t step = 1 << 20) {
  http::request_parser<http::empty_body> parser;
  parser.eager(false);
  HeadScanner scanner;
  std::string buffer;
  for (std::size_t at = 0; !parser.is_header_done();) {
    if (at >= bytes.size()) return -1;  // still waiting for the rest of the head
    buffer.append(bytes.substr(at, step));
    at += step;
    if (scanner.scan(buffer)) return 400;
    boost::system::error_code ec;
    const std::size_t used = parser.put(boost::asio::buffer(buffer), ec);
    buffer.erase(0, used);
    scanner.consumed(used);
    if (ec && ec != http::error::need_more) return 400;
  }
  return check_request_framing(parser.get()).status;
}

const std::string kPost = "POST /x HTTP/1.1\r\nHost: a\r\n";

TEST(RequestFraming, SoundHeadsAreServed) {
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), 0);
  EXPECT_EQ(judge(kPost + "Content-Length: 5\r\n\r\nhello"), 0);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), 0);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding:  Chunked \r\n\r\n0\r\n\r\n"), 0);
  EXPECT_EQ(judge(kPost + "Content-Length: 005\r\n\r\nhello"), 0);
  EXPECT_EQ(judge("GET / HTTP/1.0\r\n\r\n"), 0);
  // Tabs inside a value and bytes above 0x7f (obs-text) are field content.
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\tc \xe9\r\n\r\n"), 0);
  // Whatever follows the head (the body, the next request) is not the scanner's business.
  EXPECT_EQ(judge(kPost + "Content-Length: 4\r\n\r\n\n \x01\x00"), 0);
}

TEST(RequestFraming, TransferEncodingThatIsNotExactlyChunkedIsRefused) {
  // The body would be read by Content-Length, or as the next request.
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: chunked, identity\r\n\r\n"), 400);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n"),
            400);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: chunked, chunked\r\n\r\n"), 400);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: chunked;q=1\r\n\r\n"), 400);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: ,\r\n\r\n"), 400);
  // Codings sluice does not implement: 501, as nginx.
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: xchunked\r\n\r\n"), 501);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: identity\r\n\r\n"), 501);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: gzip, chunked\r\n\r\n"), 501);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"), 501);
}

TEST(RequestFraming, TransferEncodingOnHttp10OrBesideContentLengthIsRefused) {
  EXPECT_EQ(judge("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(judge(kPost + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"), 400);
  // Beast takes this pair (the coding is not chunked), and reads the body by its length.
  EXPECT_EQ(judge(kPost + "Transfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nhello"), 400);
}

TEST(RequestFraming, ContentLengthMustBeOneDecimalNumber) {
  EXPECT_EQ(judge(kPost + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello"), 400);
  EXPECT_EQ(judge(kPost + "Content-Length: 5, 5\r\n\r\nhello"), 400);
  EXPECT_EQ(judge(kPost + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"), 400);
  EXPECT_EQ(judge(kPost + "Content-Length: +5\r\n\r\nhello"), 400);
  EXPECT_EQ(judge(kPost + "Content-Length: 0x5\r\n\r\nhello"), 400);
  EXPECT_EQ(judge(kPost + "Content-Length: 99999999999999999999999\r\n\r\n"), 400);
}

TEST(RequestFraming, ObsoleteLineFoldingIsRefused) {
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n"), 400);
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\tc\r\n\r\n"), 400);
  // A folded Transfer-Encoding hides the coding from one reader and not another.
  EXPECT_EQ(judge(kPost + "Transfer-Encoding:\r\n chunked\r\n\r\n"), 400);
  // Whitespace between the request line and the first field.
  EXPECT_EQ(judge("GET / HTTP/1.1\r\n Host: a\r\n\r\n"), 400);
}

TEST(RequestFraming, BareLineFeedsAndControlBytesAreRefused) {
  EXPECT_EQ(judge("GET / HTTP/1.1\nHost: a\n\n"), 400);
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n"), 400);
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\r\n\n"), 400);
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n"), 400);
  EXPECT_EQ(judge(std::string("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\0c\r\n\r\n", 38)), 400);
  EXPECT_EQ(judge(std::string("GET / HTTP/1.1\r\nHost: a\r\nX\0A: b\r\n\r\n", 36)), 400);
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x01\r\n\r\n"), 400);
  EXPECT_EQ(judge("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x7f\r\n\r\n"), 400);
}

TEST(RequestFraming, AHeadCutIntoAnyReadsIsJudgedTheSame) {
  const std::vector<std::pair<std::string, int>> heads = {
      {"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\r\n", 0},
      {"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", 400},
      {"GET / HTTP/1.1\nHost: a\n\n", 400},
      {kPost + "Transfer-Encoding: chunked, identity\r\n\r\n", 400},
      {kPost + "Transfer-Encoding: xchunked\r\n\r\n", 501},
  };
  for (const auto& [head, status] : heads) {
    for (std::size_t step : {1, 2, 3, 7, 16}) {
      EXPECT_EQ(judge(head, step), status) << head << " in reads of " << step;
    }
  }
}

TEST(CheckFraming, NamesTheProblem) {
  const std::string_view te[] = {"chunked, identity"};
  const auto problem = check_framing(11, {}, te);
  EXPECT_EQ(problem.status, 400);
  EXPECT_EQ(problem.reason, "chunked twice, or not the last transfer coding");
  EXPECT_FALSE(check_framing(11, {}, {}));
}

}  // namespace
}  // namespace sluice::server::gateway
