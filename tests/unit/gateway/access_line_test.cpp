// The access-log line as docs/logging.md defines it: the text columns in order, "-" for an empty
// one, the escapes that keep a hostile value inside its column and its line, the JSON object
// with its fields, and which X-Request-Id a gateway keeps.
#include "access_line.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <set>
#include <string>
#include <vector>

namespace sluice::server::gateway {
namespace {

using config::AccessLogFormat;

// 2024-05-01T12:00:00.123Z
constexpr std::int64_t kTime = 1714564800123;

AccessFields rejected() {
  AccessFields f;
  f.time_ms = kTime;
  f.client = "10.0.0.7";
  f.request_id = "abc-123";
  f.method = "GET";
  f.target = "/api/x?y=1";
  f.status = 429;
  f.bytes = 18;
  f.route = "api";
  f.outcome = "reject";
  f.rule = "per-user";
  f.key = "alice";
  return f;
}

std::vector<std::string> columns(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line.substr(0, line.size() - 1)) {
    if (c == ' ') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

TEST(AccessLine, TextHasFifteenColumnsInTheDocumentedOrder) {
  std::string line;
  format_access_line(rejected(), AccessLogFormat::kText, line);
  EXPECT_EQ(line,
            "2024-05-01T12:00:00.123Z 10.0.0.7 abc-123 GET /api/x?y=1 429 18 api reject per-user "
            "alice 0.0 - - -\n");
  EXPECT_EQ(columns(line).size(), 15u);
}

TEST(AccessLine, TextOfAForwardedDelayedRequestGivesTheDelayUpstreamAndItsTime) {
  AccessFields f = rejected();
  f.status = 200;
  f.outcome = "delay";
  f.delay_ms = 250;
  f.upstream = "app";
  f.upstream_ms = 3.24;
  f.dry_run = "shadow";
  std::string line;
  format_access_line(f, AccessLogFormat::kText, line);
  const auto c = columns(line);
  ASSERT_EQ(c.size(), 15u);
  EXPECT_EQ(c[11], "250.0");
  EXPECT_EQ(c[12], "app");
  EXPECT_EQ(c[13], "3.2");
  EXPECT_EQ(c[14], "shadow");
}

TEST(AccessLine, TextEscapesSpacesQuotesControlBytesAndHighBytesAsHex) {
  AccessFields f = rejected();
  f.key = "a b\"c\\d\te\nf\x7f\xc3\xa9";
  f.target = "/x\r\n2024-01-01T00:00:00.000Z forged";
  std::string line;
  format_access_line(f, AccessLogFormat::kText, line);
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line, whatever the values hold
  const auto c = columns(line);
  ASSERT_EQ(c.size(), 15u);
  EXPECT_EQ(c[10], "a\\x20b\\x22c\\x5cd\\x09e\\x0af\\x7f\\xc3\\xa9");
  EXPECT_EQ(c[4], "/x\\x0d\\x0a2024-01-01T00:00:00.000Z\\x20forged");
}

TEST(AccessLine, TextWritesAnEmptyValueAsADashAndADashValueEscaped) {
  AccessFields f = rejected();
  f.key = "";
  f.rule = "-";
  std::string line;
  format_access_line(f, AccessLogFormat::kText, line);
  const auto c = columns(line);
  EXPECT_EQ(c[9], "\\x2d");
  EXPECT_EQ(c[10], "-");
}

TEST(AccessLine, JsonIsOneObjectWithEveryDocumentedField) {
  AccessFields f = rejected();
  f.upstream_ms = 12.345;
  std::string line;
  format_access_line(f, AccessLogFormat::kJson, line);
  ASSERT_EQ(line.find('\n'), line.size() - 1);
  const boost::json::object o = boost::json::parse(line).as_object();
  std::set<std::string> names;
  for (const auto& kv : o) names.insert(std::string(kv.key()));
  EXPECT_EQ(names, (std::set<std::string>{"time", "client", "request_id", "method", "target",
                                          "status", "bytes", "route", "outcome", "rule", "key",
                                          "delay_ms", "upstream", "upstream_ms", "dry_run"}));
  EXPECT_EQ(o.at("time").as_string(), "2024-05-01T12:00:00.123Z");
  EXPECT_EQ(o.at("status").as_int64(), 429);
  EXPECT_EQ(o.at("bytes").to_number<std::uint64_t>(), 18u);
  EXPECT_EQ(o.at("rule").as_string(), "per-user");
  EXPECT_EQ(o.at("key").as_string(), "alice");
  EXPECT_EQ(o.at("delay_ms").as_double(), 0.0);
  EXPECT_DOUBLE_EQ(o.at("upstream_ms").as_double(), 12.3);
  EXPECT_TRUE(o.at("upstream").is_null());
  EXPECT_TRUE(o.at("dry_run").is_null());
}

TEST(AccessLine, JsonKeepsHostileTextInsideItsStringAndInvalidUtf8Readable) {
  AccessFields f = rejected();
  f.key = "a\"}\n{\"key\":\"forged";
  f.target = "/\xff\xfe\xc3\xa9";  // not UTF-8
  f.route = "caf\xc3\xa9";         // UTF-8: kept as it is
  std::string line;
  format_access_line(f, AccessLogFormat::kJson, line);
  ASSERT_EQ(line.find('\n'), line.size() - 1);
  const boost::json::object o = boost::json::parse(line).as_object();
  EXPECT_EQ(o.at("key").as_string(), "a\"}\n{\"key\":\"forged");
  EXPECT_EQ(o.at("target").as_string(), "/\\xff\\xfe\\xc3\\xa9");
  EXPECT_EQ(o.at("route").as_string(), "caf\xc3\xa9");
}

TEST(AccessLine, ALineAppendsToWhatTheBufferHolds) {
  std::string line = "kept ";
  format_access_line(rejected(), AccessLogFormat::kText, line);
  EXPECT_TRUE(line.starts_with("kept 2024-05-01T"));
}

TEST(RequestId, AClientIdIsKeptWhenShortAndPrintable) {
  EXPECT_TRUE(usable_request_id("7f3a9c"));
  EXPECT_TRUE(usable_request_id("req:1/2+3=4_5.6-7"));
  EXPECT_TRUE(usable_request_id(std::string(kMaxRequestId, 'a')));
  EXPECT_FALSE(usable_request_id(""));
  EXPECT_FALSE(usable_request_id(std::string(kMaxRequestId + 1, 'a')));
  EXPECT_FALSE(usable_request_id("a b"));
  EXPECT_FALSE(usable_request_id("a\"b"));
  EXPECT_FALSE(usable_request_id("a\\b"));
  EXPECT_FALSE(usable_request_id("a\x01"));
  EXPECT_FALSE(usable_request_id("caf\xc3\xa9"));
}

TEST(RequestId, AMadeIdIs32HexDigitsAndDiffersEachTime) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    char id[33];
    make_request_id(id);
    const std::string s(id);
    ASSERT_EQ(s.size(), 32u);
    EXPECT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace sluice::server::gateway
