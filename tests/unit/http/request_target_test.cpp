// Request targets as routes and keys see them: every spelling of one path is that path, and
// what cannot be normalized is refused (the gateway answers 400), as nginx 1.22 does.
#include "sluice/proto/http/request_target.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice::proto::http {
namespace {

struct Normalized {
  TargetError error;
  std::string authority;
  std::string path;
  std::string query;
};

Normalized norm(std::string_view target, EscapedSlashes slashes = EscapedSlashes::kDecode) {
  std::string scratch;
  TargetParts parts;
  const TargetError e = normalize_target(target, slashes, scratch, parts);
  return {e, std::string(parts.authority), std::string(parts.path), std::string(parts.query)};
}

TEST(RequestTarget, EverySpellingOfLoginIsLogin) {
  for (const char* spelling :
       {"/login", "/./login", "//login", "/x/../login", "/%6cogin", "/%6Cogin", "/%2e/login",
        "/%2E/login", "///./x/./../login", "/a/b/../../login", "/%2flogin", "/x%2F..%2Flogin"}) {
    const Normalized n = norm(spelling);
    EXPECT_EQ(n.error, TargetError::kNone) << spelling;
    EXPECT_EQ(n.path, "/login") << spelling;
  }
}

TEST(RequestTarget, DotSegmentsResolveAsRfc3986Says) {
  EXPECT_EQ(norm("/app/../v1/rules").path, "/v1/rules");
  EXPECT_EQ(norm("/a/b/..").path, "/a/");
  EXPECT_EQ(norm("/a/b/.").path, "/a/b/");
  EXPECT_EQ(norm("/a/..").path, "/");
  EXPECT_EQ(norm("/.").path, "/");
  EXPECT_EQ(norm("/login/").path, "/login/");
  EXPECT_EQ(norm("/login//").path, "/login/");
  EXPECT_EQ(norm("/a/.b/..c/...").path, "/a/.b/..c/...");  // only "." and ".." are special
}

TEST(RequestTarget, ReservedEscapesStayEncodedInUpperCase) {
  EXPECT_EQ(norm("/a%3fb").path, "/a%3Fb");  // an encoded '?' is not a query
  EXPECT_EQ(norm("/a%20b").path, "/a%20b");
  EXPECT_EQ(norm("/%00").path, "/%00");
  EXPECT_EQ(norm("/caf%c3%a9").path, "/caf%C3%A9");
}

TEST(RequestTarget, EncodedSlashesFollowTheSetting) {
  EXPECT_EQ(norm("/a%2Fb", EscapedSlashes::kDecode).path, "/a/b");
  EXPECT_EQ(norm("/a%2fb", EscapedSlashes::kKeep).path, "/a%2Fb");
  EXPECT_EQ(norm("/a%2F..%2Fb", EscapedSlashes::kKeep).path, "/a%2F..%2Fb");
  EXPECT_EQ(norm("/a%2Fb", EscapedSlashes::kReject).error, TargetError::kEscapedSlash);
}

TEST(RequestTarget, WhatCannotBeNormalizedIsRefused) {
  EXPECT_EQ(norm("").error, TargetError::kEmpty);
  EXPECT_EQ(norm("/../login").error, TargetError::kAboveRoot);
  EXPECT_EQ(norm("/a/../../login").error, TargetError::kAboveRoot);
  EXPECT_EQ(norm("/%2e%2e/login").error, TargetError::kAboveRoot);
  EXPECT_EQ(norm("/%zzlogin").error, TargetError::kBadEscape);
  EXPECT_EQ(norm("/login%4").error, TargetError::kBadEscape);
  EXPECT_EQ(norm("/login%").error, TargetError::kBadEscape);
  EXPECT_EQ(norm("/lo#gin").error, TargetError::kBadCharacter);
  EXPECT_EQ(norm("*").error, TargetError::kBadForm);
  EXPECT_EQ(norm("internal.example:443").error, TargetError::kBadForm);
  EXPECT_EQ(norm("ftp://internal.example/x").error, TargetError::kBadScheme);
  EXPECT_EQ(norm("http:///x").error, TargetError::kBadAuthority);
  EXPECT_EQ(norm("http://user@internal.example/x").error, TargetError::kBadAuthority);
  EXPECT_EQ(norm("http://in/ternal").path, "/ternal");
}

TEST(RequestTarget, AbsoluteFormGivesAuthorityAndOriginForm) {
  const Normalized n = norm("http://internal.example/secret?x=1");
  EXPECT_EQ(n.error, TargetError::kNone);
  EXPECT_EQ(n.authority, "internal.example");
  EXPECT_EQ(n.path, "/secret");
  EXPECT_EQ(n.query, "x=1");
  EXPECT_EQ(norm("HTTPS://Internal.Example:8443").authority, "Internal.Example:8443");
  EXPECT_EQ(norm("HTTPS://Internal.Example:8443").path, "/");
  EXPECT_EQ(norm("http://h/a/../b").path, "/b");
}

TEST(RequestTarget, QueryIsKeptAsSent) {
  const Normalized n = norm("/a/./b?next=/../x&y=%2e");
  EXPECT_EQ(n.path, "/a/b");
  EXPECT_EQ(n.query, "next=/../x&y=%2e");
}

std::string host(std::string_view authority, bool* ok = nullptr) {
  std::string scratch;
  std::string_view out;
  const bool good = routing_host(authority, scratch, out);
  if (ok != nullptr) *ok = good;
  return good ? std::string(out) : "<bad>";
}

TEST(RoutingHost, OneHostHasOneSpelling) {
  EXPECT_EQ(host("public.example"), "public.example");
  EXPECT_EQ(host("Public.Example"), "public.example");
  EXPECT_EQ(host("public.example."), "public.example");
  EXPECT_EQ(host("public.example:8080"), "public.example");
  EXPECT_EQ(host("PUBLIC.EXAMPLE.:80"), "public.example");
  EXPECT_EQ(host("[::1]:8080"), "[::1]");
  EXPECT_EQ(host("127.0.0.1:80"), "127.0.0.1");
  EXPECT_EQ(host("[2001:DB8::1]:443"), "[2001:db8::1]");
  EXPECT_EQ(host("[::ffff:192.0.2.1]"), "[::ffff:192.0.2.1]");
  EXPECT_EQ(host("h:"), "h");  // RFC 3986: port = *DIGIT
}

TEST(RoutingHost, WhatIsNotAHostIsRefused) {
  for (const char* bad :
       {"a/b", "x@y", "[::1", "[]", "h:8o", "h:123456", "..", ".", "a..b", ".a", "a b", "h\t",
        "[::1]x", "[zz]",
        // Empty, or no host before the port (nginx: 400 for both).
        "", ":80", ".:80",
        // Brackets hold an IPv6 address (RFC 3986 §3.2.2), nothing else.
        "[1.2.3.4]", "[:::::]", "[::1::2]", "[v1.x]", "[fe80::1%25eth0]", "[12345::]"}) {
    bool ok = true;
    host(bad, &ok);
    EXPECT_FALSE(ok) << bad;
  }
}

TEST(PercentDecode, DecodesEveryEscapeAndRefusesBrokenOnes) {
  EXPECT_EQ(percent_decode("a%2Fb%20c"), std::optional<std::string>("a/b c"));
  EXPECT_EQ(percent_decode("plain"), std::optional<std::string>("plain"));
  EXPECT_EQ(percent_decode("bad%2"), std::nullopt);
  EXPECT_EQ(percent_decode("bad%g0"), std::nullopt);
}

}  // namespace
}  // namespace sluice::proto::http
