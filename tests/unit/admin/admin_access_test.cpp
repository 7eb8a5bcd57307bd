// The admin listener's access checks: which Host values name a listener (DNS rebinding), the
// bearer token's comparison, and reading the token from a file or the environment.
#include "admin_access.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace sluice::server {
namespace {

namespace ip = boost::asio::ip;

ListenerInfo listener(const char* address, std::string configured = "") {
  ListenerInfo l;
  l.bound = ip::make_address(address);
  l.port = 9090;
  l.configured_host = std::move(configured);
  return l;
}

TEST(HostAllowed, ALoopbackListenerAnswersItsAddressAndLocalhostOnly) {
  const ListenerInfo l = listener("127.0.0.1");
  for (const char* host : {"127.0.0.1", "127.0.0.1:9090", "127.0.0.1:80", "localhost",
                           "LOCALHOST:9090", "localhost.", "app.localhost"}) {
    EXPECT_TRUE(host_allowed(host, l, {})) << host;
  }
  for (const char* host : {"evil.example", "evil.example:9090", "127.0.0.2", "[::1]",
                           "localhost.evil.example", "", "a/b", "[::1"}) {
    EXPECT_FALSE(host_allowed(host, l, {})) << host;
  }
}

TEST(HostAllowed, ConfiguredNamesAndTheConfigsOwnHostNameAreAccepted) {
  const ListenerInfo l = listener("10.0.0.5", "sluice-admin");
  EXPECT_TRUE(host_allowed("Sluice-Admin:9090", l, {}));
  EXPECT_TRUE(host_allowed("sluice.internal", l, {"sluice.internal"}));
  EXPECT_TRUE(host_allowed("10.0.0.5:9090", l, {}));
  EXPECT_FALSE(host_allowed("localhost", l, {}));  // not a loopback listener
  EXPECT_FALSE(host_allowed("other.internal", l, {"sluice.internal"}));
}

TEST(HostAllowed, AListenerOnAllAddressesAcceptsAnyAddressButNoStrangeName) {
  const ListenerInfo v4 = listener("0.0.0.0");
  EXPECT_TRUE(host_allowed("192.0.2.7:9090", v4, {}));
  EXPECT_TRUE(host_allowed("[2001:db8::1]:9090", v4, {}));
  EXPECT_FALSE(host_allowed("rebound.example", v4, {}));
  const ListenerInfo v6 = listener("::1");
  EXPECT_TRUE(host_allowed("[::1]:9090", v6, {}));
  EXPECT_TRUE(v6.loopback());
  EXPECT_TRUE(listener("::ffff:127.0.0.1").loopback());
  EXPECT_FALSE(v4.loopback());
}

AdminAccess access_with(const std::string& token) {
  config::RuleSet rules;
  rules.admin_auth.token_env = "SLUICE_UNIT_ADMIN_TOKEN";
  ::setenv("SLUICE_UNIT_ADMIN_TOKEN", token.c_str(), 1);
  auto access = resolve_access(rules, "test.yaml");
  EXPECT_TRUE(access.ok()) << (access.ok() ? "" : access.error());
  return access.ok() ? *access : AdminAccess{};
}

TEST(BearerToken, OnlyTheExactTokenAfterBearerInAnyCaseMatches) {
  const AdminAccess a = access_with("0123456789abcdef0123456789abcdef\n");
  EXPECT_TRUE(bearer_matches("Bearer 0123456789abcdef0123456789abcdef", a));
  EXPECT_TRUE(bearer_matches("bearer  0123456789abcdef0123456789abcdef ", a));
  EXPECT_FALSE(bearer_matches("Bearer 0123456789abcdef0123456789abcde", a));
  EXPECT_FALSE(bearer_matches("Bearer 0123456789abcdef0123456789abcdef0", a));
  EXPECT_FALSE(bearer_matches("Basic 0123456789abcdef0123456789abcdef", a));
  EXPECT_FALSE(bearer_matches("0123456789abcdef0123456789abcdef", a));
  EXPECT_FALSE(bearer_matches("", a));
  EXPECT_FALSE(bearer_matches("Bearer anything", AdminAccess{}));  // no token: nothing matches
}

TEST(BearerToken, AFileTokenIsReadWithoutItsNewlineAndABadOneNamesTheLine) {
  char path[] = "/tmp/sluice-token-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << "  abcdefghijklmnopqrstuvwxyz012345==\r\n";
  config::RuleSet rules;
  rules.admin_auth.token_file = path;
  rules.admin_auth.line = 7;
  auto access = resolve_access(rules, "sluice.yaml");
  ASSERT_TRUE(access.ok()) << access.error();
  EXPECT_TRUE(bearer_matches("Bearer abcdefghijklmnopqrstuvwxyz012345==", *access));

  std::ofstream(path) << "abc=def0123456789abcdef";
  access = resolve_access(rules, "sluice.yaml");
  ASSERT_FALSE(access.ok());
  EXPECT_EQ(access.error(),
            "sluice.yaml:7: field 'admin_auth.token_file': the token holds '='; a bearer token "
            "is letters, digits and -._~+/ (then '=' padding)");
  ::unlink(path);
}

TEST(Exposure, OnlyAListenerOffLoopbackWithoutATokenOrLeaveIsRefused) {
  const AdminAccess none;
  EXPECT_EQ(exposure_problem(listener("127.0.0.1"), none, false), std::nullopt);
  EXPECT_EQ(exposure_problem(listener("0.0.0.0"), none, true), std::nullopt);
  EXPECT_EQ(exposure_problem(listener("0.0.0.0"), access_with(std::string(16, 'a')), false),
            std::nullopt);
  const auto problem = exposure_problem(listener("::"), none, false);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->rfind("admin listener [::]:9090 is not on loopback and has no token", 0), 0u)
      << *problem;
}

}  // namespace
}  // namespace sluice::server
