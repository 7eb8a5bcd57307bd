// The engine: routes, keys, actions, headers and live reloads, on requests built by hand.
#include "sluice/engine/engine.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sluice/config/loader.hpp"

namespace sluice::engine {
namespace {

using core::kNanosPerMilli;
using core::kNanosPerSecond;

config::RuleSet load(const std::string& yaml) {
  auto loaded = config::load_config_text(yaml, "test.yaml");
  std::string errors;
  for (const auto& e : loaded.errors) errors += e.format() + "\n";
  EXPECT_TRUE(loaded.rules.has_value()) << errors;
  return loaded.rules ? *loaded.rules : config::RuleSet{};
}

// A request to `path` (query after '?') from `peer` with extra headers.
struct Req {
  std::string method = "GET";
  std::string host = "example.com";
  std::string path = "/api/x";
  std::string query;
  std::string peer = "10.1.1.1";
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<Header> views;
  RequestView view() {
    views.clear();
    for (const auto& [n, v] : headers) views.push_back({n, v});
    return RequestView{method, host, path, query, peer, views};
  }
};

// A gateway config with one upstream `app`: `route` is the route as a flow mapping, `rules` the
// indented body of the rules block, `extra` more top-level lines.
std::string config(std::string_view route, std::string_view rules, std::string_view extra = "") {
  std::string out = "listen: 127.0.0.1:8080\n";
  out += extra;
  out += "upstreams:\n  app: {servers: [127.0.0.1:8081]}\nroutes:\n  - ";
  out += route;
  out += "\nrules:\n";
  out += rules;
  return out;
}

std::string header_of(const std::vector<std::pair<std::string, std::string>>& headers,
                      std::string_view name) {
  for (const auto& [n, val] : headers) {
    if (n == name) return val;
  }
  return "";
}

std::string header(const Verdict& v, std::string_view name) { return header_of(v.headers, name); }

const std::string kPerUser =
    config("{name: api, match: {path_prefix: /api/}, upstream: app, rules: [per-user]}",
           "  per-user:\n    limit: token-bucket:rate=1/s,burst=2\n    key: query:userId\n");

TEST(Engine, PerUserKeyFromTheQueryThrottlesEachUserAlone) {
  Engine e(load(kPerUser), 0);
  Req alice;
  alice.query = "userId=alice";
  Req bob;
  bob.query = "page=2&userId=bob";
  EXPECT_EQ(e.decide(alice.view(), 0).kind, Verdict::Kind::kForward);
  EXPECT_EQ(e.decide(alice.view(), 0).kind, Verdict::Kind::kForward);
  const Verdict third = e.decide(alice.view(), 0);
  EXPECT_EQ(third.kind, Verdict::Kind::kReject);
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(header(third, "Retry-After"), "1");  // one token per second
  EXPECT_EQ(e.decide(bob.view(), 0).kind, Verdict::Kind::kForward);
}

TEST(Engine, ResponsesCarryTheIetfRateLimitFields) {
  Engine e(load(kPerUser), 0);
  Req r;
  r.query = "userId=alice";
  const Verdict v = e.decide(r.view(), 0);
  // burst 2 at 1/s: quota 2 per 2 s window; 1 left, full again in 1 s.
  EXPECT_EQ(header(v, "RateLimit-Policy"), "\"per-user\";q=2;w=2");
  EXPECT_EQ(header(v, "RateLimit"), "\"per-user\";r=1;t=1");
}

TEST(Engine, AMissingKeyIsSkippedOrDeniedAsConfigured) {
  Engine skip(load(kPerUser), 0);
  Req anonymous;
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(skip.decide(anonymous.view(), 0).kind, Verdict::Kind::kForward);
  std::string deny = kPerUser;
  deny += "    on_missing_key: deny\n";
  Engine strict(load(deny), 0);
  EXPECT_EQ(strict.decide(anonymous.view(), 0).kind, Verdict::Kind::kReject);
}

TEST(Engine, UnmatchedRequestsGetNoRoute) {
  Engine e(load(kPerUser), 0);
  Req r;
  r.path = "/other";
  EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kNoRoute);
}

const std::string kTrusted =
    config("{name: all, match: {path_prefix: /}, upstream: app, rules: [per-ip]}",
           "  per-ip: {limit: \"gcra:rate=1/m,burst=0\", key: client_ip}\n",
           "trusted_proxies: [10.0.0.0/8]\n");

TEST(Engine, ClientAddressComesFromXForwardedForOnlyBehindATrustedProxy) {
  Engine e(load(kTrusted), 0);
  Req via_proxy;  // peer 10.1.1.1 is trusted: the client is 203.0.113.7
  via_proxy.headers = {{"X-Forwarded-For", "198.51.100.1, 203.0.113.7"}};
  EXPECT_EQ(e.decide(via_proxy.view(), 0).client, "203.0.113.7");
  Req spoofer;  // an untrusted peer's X-Forwarded-For is ignored
  spoofer.peer = "192.0.2.9";
  spoofer.headers = {{"X-Forwarded-For", "203.0.113.7"}};
  EXPECT_EQ(e.decide(spoofer.view(), 0).client, "192.0.2.9");
  EXPECT_EQ(e.decide(spoofer.view(), 0).kind, Verdict::Kind::kReject);  // its own budget, spent
}

TEST(Engine, DelayRuleHoldsUpToMaxWaitThenRejects) {
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [smooth]}",
             "  smooth: {limit: \"gcra:rate=10/s,burst=0\", key: const:all, action: delay, "
             "max_wait: 250ms}\n");
  Engine e(load(yaml), 0);
  Req r;
  std::vector<core::Nanos> delays;
  for (int i = 0; i < 4; ++i) {
    const Verdict v = e.decide(r.view(), 0);
    if (v.kind == Verdict::Kind::kForward) delays.push_back(v.delay);
  }
  // One every 100 ms: at once, then 100 and 200 ms; the 4th would wait 300 ms > 250 ms.
  EXPECT_EQ(delays, (std::vector<core::Nanos>{0, 100 * kNanosPerMilli, 200 * kNanosPerMilli}));
}

TEST(Engine, DryRunCountsButNeverBlocks) {
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [shadow]}",
             "  shadow: {limit: \"gcra:rate=1/s,burst=0\", key: const:all, action: dry-run}\n");
  Engine e(load(yaml), 0);
  Req r;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kForward);
  std::string metrics;
  e.write_metrics(metrics);
  EXPECT_NE(metrics.find("route=\"all\",rule=\"shadow\",outcome=\"dry_run_denied\"} 2"),
            std::string::npos)
      << metrics;
}

TEST(Engine, ReloadKeepsStateOfUnchangedLimitsAndRetunesChangedOnes) {
  Engine e(load(kPerUser), 0);
  Req r;
  r.query = "userId=alice";
  e.decide(r.view(), 0);
  e.decide(r.view(), 0);
  EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kReject);  // alice spent her burst
  // Same rule: alice is still out of tokens after the reload.
  EXPECT_TRUE(e.apply(load(kPerUser), 0).empty());
  EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kReject);
  // Rate raised to 10/s: state kept (still empty at t=0), new rate applies 100 ms later.
  std::string faster = kPerUser;
  faster.replace(faster.find("rate=1/s"), 8, "rate=10/s");
  EXPECT_TRUE(e.apply(load(faster), 0).empty());
  EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kReject);
  EXPECT_EQ(e.decide(r.view(), 100 * kNanosPerMilli).kind, Verdict::Kind::kForward);
}

TEST(Engine, ABadRuleSetIsRefusedAndTheOldOneKeepsServing) {
  Engine e(load(kPerUser), 0);
  config::RuleSet bad = load(kPerUser);
  bad.routes.front().rules = {"no-such-rule"};
  EXPECT_FALSE(e.apply(bad, 0).empty());
  Req r;
  r.query = "userId=alice";
  EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kForward);
  EXPECT_EQ(e.snapshot()->version, 1u);
}

TEST(Engine, GlobalFirstThenPerUser) {
  const std::string yaml = config(
      "{name: all, match: {path_prefix: /}, upstream: app, rules: [global, per-user], "
      "combine: first}",
      "  global: {limit: \"token-bucket:rate=1/s,burst=3\", key: const:all}\n"
      "  per-user: {limit: \"token-bucket:rate=1/s,burst=1\", key: header:X-User}\n");
  Engine e(load(yaml), 0);
  Req heavy;
  heavy.headers = {{"X-User", "heavy"}};
  Req light;
  light.headers = {{"X-User", "light"}};
  int heavy_passed = 0;
  for (int i = 0; i < 6; ++i)
    heavy_passed += e.decide(heavy.view(), 0).kind == Verdict::Kind::kForward;
  EXPECT_EQ(heavy_passed, 4);  // 3 from the global bucket, then 1 of its own
  EXPECT_EQ(e.decide(light.view(), 0).kind, Verdict::Kind::kForward);  // its own token
}

TEST(Engine, ConcurrencyRuleHoldsLeasesUntilTheVerdictIsDropped) {
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [conn]}",
             "  conn: {limit: \"concurrency:limit=1\", key: client_ip}\n");
  Engine e(load(yaml), 0);
  Req r;
  {
    const Verdict first = e.decide(r.view(), 0);
    EXPECT_EQ(first.kind, Verdict::Kind::kForward);
    EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kReject);
    EXPECT_EQ(header(first, "RateLimit-Policy"), "\"conn\";q=1;qu=\"concurrent-requests\"");
  }
  EXPECT_EQ(e.decide(r.view(), 0).kind, Verdict::Kind::kForward);
}

}  // namespace
}  // namespace sluice::engine

namespace sluice::engine {
namespace {

TEST(EngineCheck, ARuleByNameDecidesOneKeyAndDescribesIt) {
  Engine e(load(kPerUser), 0);
  EXPECT_TRUE(e.check("per-user", "alice", 1, 0).decision.allowed);
  EXPECT_TRUE(e.check("per-user", "alice", 1, 0).decision.allowed);
  const CheckResult third = e.check("per-user", "alice", 1, 0);
  EXPECT_FALSE(third.decision.allowed);
  EXPECT_EQ(header_of(third.headers, "Retry-After"), "1");
  EXPECT_EQ(header_of(third.headers, "RateLimit"), "\"per-user\";r=0;t=2");
  EXPECT_EQ(e.check("no-such", "alice", 1, 0).status, CheckResult::Status::kUnknownRule);
}

TEST(EngineCheck, TheCheckApiAndTheGatewayShareTheRulesState) {
  Engine e(load(kPerUser), 0);
  Req alice;
  alice.query = "userId=alice";
  e.check("per-user", "alice", 2, 0);  // both tokens, through the decision service
  EXPECT_EQ(e.decide(alice.view(), 0).kind, Verdict::Kind::kReject);
}

TEST(EngineCheck, InlineLimitsGetATablePerSpecAndRefuseBadSpecs) {
  Engine e(load(kPerUser), 0);
  EXPECT_TRUE(e.check_inline("gcra:rate=1/s,burst=0", "k", 1, 0, 0).decision.allowed);
  EXPECT_FALSE(e.check_inline("gcra:burst=0,rate=1/s", "k", 1, 0, 0).decision.allowed)
      << "the same limit written in another order shares the table";
  EXPECT_TRUE(e.check_inline("gcra:rate=1/s,burst=0", "other", 1, 0, 0).decision.allowed);
  const auto bad = e.check_inline("gcra:rate=1/s", "k", 1, 0, 0);
  EXPECT_EQ(bad.status, CheckResult::Status::kBadLimit);
  EXPECT_NE(bad.error.find("burst"), std::string::npos);
}

}  // namespace
}  // namespace sluice::engine
