// The hand-written response head scanner: what it takes and what each head yields, and every
// head it leaves to Beast's parser (the gateway relays those exactly as before the scanner).
#include "sluice/proto/http/response_head.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::proto::http {
namespace {

constexpr std::size_t kLimit = 32u << 10;

HeadScan scan_of(std::string_view bytes, bool head_request = false, std::size_t limit = kLimit) {
  ResponseHeadScanner s;
  return s.scan(bytes, head_request, limit);
}

std::vector<std::pair<std::string, std::string>> fields_of(const ResponseHead& h) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const HeadField& f : h.fields) out.emplace_back(f.name, f.value);
  return out;
}

TEST(ResponseHeadScan, TakesAHeadWithOneContentLength) {
  const std::string bytes =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nX-A:  b c \t\r\n\r\n"
      "hello world\n";
  ResponseHeadScanner s;
  ASSERT_EQ(s.scan(bytes, false, kLimit), HeadScan::kDone);
  const ResponseHead& h = s.head();
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.version, 11u);
  EXPECT_EQ(h.reason, "OK");
  EXPECT_TRUE(h.keep_alive);
  EXPECT_EQ(h.content_length, 12u);
  using F = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(fields_of(h), (F{{"Content-Type", "text/plain"},
                             {"Content-Length", "12"},
                             {"X-A", "b c"}}));  // trimmed around, not inside
  EXPECT_EQ(s.size(), bytes.size() - 12);        // the body is not the head's
  EXPECT_EQ(h.find("content-type"), "text/plain");
  EXPECT_EQ(h.find("X-Missing"), std::nullopt);
}

TEST(ResponseHeadScan, KeepAliveFollowsTheVersionAndConnection) {
  const auto keep = [](std::string_view head) {
    ResponseHeadScanner s;
    EXPECT_EQ(s.scan(head, false, kLimit), HeadScan::kDone) << head;
    return s.head().keep_alive;
  };
  EXPECT_TRUE(keep("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_FALSE(keep("HTTP/1.1 200 OK\r\nConnection: x, Close\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_FALSE(keep("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_TRUE(keep("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"));
  // Beast reads Proxy-Connection as Connection.
  EXPECT_FALSE(keep("HTTP/1.1 200 OK\r\nProxy-Connection: close\r\nContent-Length: 0\r\n\r\n"));
}

TEST(ResponseHeadScan, TakesHeadsWithoutABody) {
  EXPECT_EQ(scan_of("HTTP/1.1 204 No Content\r\n\r\n"), HeadScan::kDone);
  EXPECT_EQ(scan_of("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"), HeadScan::kDone);
  // The answer to HEAD: its length is the GET's, and there is none to read.
  ResponseHeadScanner s;
  ASSERT_EQ(s.scan("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", true, kLimit), HeadScan::kDone);
  EXPECT_EQ(s.head().content_length, 99u);
  EXPECT_EQ(scan_of("HTTP/1.1 200 OK\r\n\r\n", true), HeadScan::kDone);
}

TEST(ResponseHeadScan, AnEmptyReasonAndObsTextAreTaken) {
  ResponseHeadScanner s;
  ASSERT_EQ(s.scan("HTTP/1.1 404 \r\nX: caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n", false, kLimit),
            HeadScan::kDone);
  EXPECT_EQ(s.head().reason, "");
  EXPECT_EQ(s.head().fields[0].value, "caf\xc3\xa9");
}

TEST(ResponseHeadScan, AnIncompleteHeadAsksForMoreAtEveryByte) {
  const std::string bytes = "HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: 3\r\n\r\n";
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_EQ(scan_of(bytes.substr(0, n)), HeadScan::kNeedMore) << n;
  }
  EXPECT_EQ(scan_of(bytes), HeadScan::kDone);
}

TEST(ResponseHeadScan, ViewsFollowTheHeadToACopy) {
  const std::string bytes = "HTTP/1.1 201 Created\r\nLocation: /a\r\nContent-Length: 0\r\n\r\n";
  ResponseHeadScanner s;
  ASSERT_EQ(s.scan(bytes, false, kLimit), HeadScan::kDone);
  std::string copy = bytes;
  s.moved(bytes.data(), copy.data());
  copy[9] = '!';  // the views now read the copy
  copy[copy.find("/a")] = '+';
  EXPECT_EQ(s.head().reason, "Created");
  EXPECT_EQ(s.head().fields[0].value, "+a");
  EXPECT_EQ(s.head().fields[0].name.data(), copy.data() + copy.find("Location"));
}

// Each of these goes to Beast's parser, which frames or refuses it as it always did.
struct Fallback {
  const char* why;
  std::string head;
};

TEST(ResponseHeadScan, LeavesToTheParserWhatItDoesNotFullyUnderstand) {
  const std::string cl = "Content-Length: 5\r\n";
  const std::vector<Fallback> cases = {
      {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"},
      {"TE and CL", "HTTP/1.1 200 OK\r\n" + cl + "Transfer-Encoding: chunked\r\n\r\n"},
      {"CL and TE", "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n" + cl + "\r\n"},
      {"a body to EOF", "HTTP/1.1 200 OK\r\nServer: x\r\n\r\n"},
      {"CL twice, same value", "HTTP/1.1 200 OK\r\n" + cl + cl + "\r\n"},
      {"CL twice, other value", "HTTP/1.1 200 OK\r\n" + cl + "content-length: 6\r\n\r\n"},
      {"CL as a list", "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n"},
      {"CL with a sign", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n"},
      {"CL negative", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"},
      {"CL with a space inside", "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n"},
      {"CL in hex", "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n"},
      {"CL empty", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n"},
      {"CL over 2^64", "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n"},
      {"obs-fold", "HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\n" + cl + "\r\n"},
      {"obs-fold by tab", "HTTP/1.1 200 OK\r\n" + cl + "X-A: b\r\n\tc\r\n\r\n"},
      {"bare LF ending a field", "HTTP/1.1 200 OK\r\nX-A: b\n" + cl + "\r\n"},
      {"bare LF ending the status", "HTTP/1.1 200 OK\n" + cl + "\r\n"},
      {"bare LF ending the head", "HTTP/1.1 200 OK\r\n" + cl + "\nhello"},
      {"CR without LF", "HTTP/1.1 200 OK\r\nX-A: b\rc\r\n" + cl + "\r\n"},
      {"NUL in a value", std::string("HTTP/1.1 200 OK\r\nX-A: b\0c\r\n", 27) + cl + "\r\n"},
      {"CTL in a value",
       "HTTP/1.1 200 OK\r\nX-A: b\x01"
       "c\r\n" +
           cl + "\r\n"},
      {"DEL in a value", "HTTP/1.1 200 OK\r\nX-A: b\x7f\r\n" + cl + "\r\n"},
      {"CTL in the reason", "HTTP/1.1 200 O\x02K\r\n" + cl + "\r\n"},
      {"a separator in a name", "HTTP/1.1 200 OK\r\nX(A): b\r\n" + cl + "\r\n"},
      {"a space before the colon", "HTTP/1.1 200 OK\r\nX-A : b\r\n" + cl + "\r\n"},
      {"an empty name", "HTTP/1.1 200 OK\r\n: b\r\n" + cl + "\r\n"},
      {"no colon", "HTTP/1.1 200 OK\r\nX-A\r\n" + cl + "\r\n"},
      {"odd Connection", "HTTP/1.1 200 OK\r\nConnection: a b\r\n" + cl + "\r\n"},
      {"empty Connection option", "HTTP/1.1 200 OK\r\nConnection: close,,\r\n" + cl + "\r\n"},
      {"101", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: ws\r\nConnection: upgrade\r\n\r\n"},
      {"100", "HTTP/1.1 100 Continue\r\n\r\n"},
      {"103", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"},
      {"status 600", "HTTP/1.1 600 X\r\n" + cl + "\r\n"},
      {"status of two digits", "HTTP/1.1 20 OK\r\n" + cl + "\r\n"},
      {"no space after the status", "HTTP/1.1 200\r\n" + cl + "\r\n"},
      {"HTTP/2.0", "HTTP/2.0 200 OK\r\n" + cl + "\r\n"},
      {"HTTP/1.2", "HTTP/1.2 200 OK\r\n" + cl + "\r\n"},
      {"lower-case http", "http/1.1 200 OK\r\n" + cl + "\r\n"},
      // Beast would move the second Set-Cookie up beside the first.
      {"a name again after another",
       "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\n" + cl + "set-cookie: b=2\r\n\r\n"},
  };
  for (const Fallback& c : cases) {
    EXPECT_EQ(scan_of(c.head), HeadScan::kFallback) << c.why;
    // Split anywhere, no part of it is taken either.
    for (std::size_t n = 0; n < c.head.size(); ++n) {
      EXPECT_NE(scan_of(c.head.substr(0, n)), HeadScan::kDone) << c.why << " at " << n;
    }
  }
}

TEST(ResponseHeadScan, AHeadOverTheLimitIsTheParsersAtTheLimitNotBefore) {
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: " + std::string(100, 'v') + "\r\n\r\n";
  EXPECT_EQ(scan_of(head, false, head.size()), HeadScan::kDone);
  EXPECT_EQ(scan_of(head, false, head.size() - 1), HeadScan::kFallback);
  // Incomplete and still under the limit: more may come.
  EXPECT_EQ(scan_of(head.substr(0, 50), false, head.size()), HeadScan::kNeedMore);
  EXPECT_EQ(scan_of(head.substr(0, 50), false, 50), HeadScan::kFallback);
}

TEST(ResponseHeadScan, ANameRepeatedInARowIsTaken) {
  ResponseHeadScanner s;
  ASSERT_EQ(s.scan("HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nVary: A\r\n"
                   "Content-Length: 0\r\n\r\n",
                   false, kLimit),
            HeadScan::kDone);
  EXPECT_EQ(s.head().fields.size(), 4u);
}

TEST(ResponseHeadScan, MoreFieldsThanItKeepsAreTheParsers) {
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n";
  for (std::size_t i = 1; i < ResponseHeadScanner::kMaxFields; ++i) head += "X: y\r\n";
  EXPECT_EQ(scan_of(head + "\r\n"), HeadScan::kDone);
  EXPECT_EQ(scan_of(head + "X: y\r\n\r\n"), HeadScan::kFallback);
}

TEST(ResponseHeadScan, ALengthUpToTheLargestIsTaken) {
  ResponseHeadScanner s;
  ASSERT_EQ(
      s.scan("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n", false, kLimit),
      HeadScan::kDone);
  EXPECT_EQ(s.head().content_length, 18446744073709551615u);
  ASSERT_EQ(s.scan("HTTP/1.1 200 OK\r\nContent-Length: 007\r\n\r\n", false, kLimit),
            HeadScan::kDone);
  EXPECT_EQ(s.head().content_length, 7u);
}

}  // namespace
}  // namespace sluice::proto::http
