// The engine: routes, keys, actions, headers and live reloads, on requests built by hand.
#include "sluice/engine/engine.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/limit_fields.hpp"
#include "keys.hpp"  // src/engine: the key a rule builds
#include "sluice/config/loader.hpp"

namespace sluice::engine {
namespace {

using server::field_choice;
using server::limit_fields;
using server::LimitFields;
using server::retry_after;

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

// The outcome of one request, decided at `now`.
Outcome decide(Engine& e, const Ask& ask, core::Nanos now) {
  Outcome out;
  e.decide(ask, now, out);
  return out;
}

// A response field of an outcome, as the HTTP frontends write it.
std::string header(const Outcome& out, std::string_view name) {
  LimitFields fields;
  limit_fields(out, fields);
  std::string lines;
  proto::http::FieldChoice choice = field_choice(out.rules());
  choice.legacy = true;
  proto::http::append_ratelimit_fields(lines, fields, choice, retry_after(out));
  const std::string prefix = std::string(name) + ": ";
  for (std::size_t at = 0; at < lines.size();) {
    const auto end = lines.find("\r\n", at);
    const std::string line = lines.substr(at, end - at);
    if (line.starts_with(prefix)) return line.substr(prefix.size());
    at = end + 2;
  }
  return "";
}

double metric(Engine& e, std::string_view name, std::initializer_list<metrics::Label> labels) {
  metrics::Registry registry;
  const auto registration = e.register_metrics(registry);
  return registry.value(name, labels);
}

const std::string kPerUser =
    config("{name: api, match: {path_prefix: /api/}, upstream: app, rules: [per-user]}",
           "  per-user:\n    limit: token-bucket:rate=1/s,burst=2\n    key: query:userId\n");

TEST(Engine, PerUserKeyFromTheQueryThrottlesEachUserAlone) {
  Engine e(load(kPerUser), 0);
  Req alice;
  alice.query = "userId=alice";
  Req bob;
  bob.query = "page=2&userId=bob";
  EXPECT_EQ(decide(e, alice.view(), 0).verdict, Verdict::kAllow);
  EXPECT_EQ(decide(e, alice.view(), 0).verdict, Verdict::kAllow);
  const Outcome third = decide(e, alice.view(), 0);
  EXPECT_EQ(third.verdict, Verdict::kDeny);
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(header(third, "Retry-After"), "1");  // one token per second
  EXPECT_EQ(decide(e, bob.view(), 0).verdict, Verdict::kAllow);
}

TEST(Engine, ResponsesCarryTheIetfRateLimitFields) {
  Engine e(load(kPerUser), 0);
  Req r;
  r.query = "userId=alice";
  const Outcome v = decide(e, r.view(), 0);
  // 1/s with a burst of 2: one item, 2 per 2 s (the burst refills in 2 s, q/w = 1 per
  // second); 1 left, the next token in 1 s.
  EXPECT_EQ(header(v, "RateLimit-Policy"), "\"per-user\";q=2;w=2");
  EXPECT_EQ(header(v, "RateLimit"), "\"per-user\";a=1;w=1");
}

TEST(Engine, APolicyTellsTheRateOfAGcraLimit) {
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [api]}",
             "  api: {limit: \"gcra:rate=1000/s,burst=100\", key: const:all}\n"
             "  slow: {limit: \"gcra:rate=30/60s,burst=15\", key: const:all}\n"
             "  odd: {limit: \"token-bucket:rate=3/250ms,burst=5\", key: const:all}\n");
  Engine e(load(yaml), 0);
  Req r;
  // Not q=101;w=1, which reads as 101 per second: the burst of 101 refills within 1 s, so
  // one item of 1000 per second holds it.
  EXPECT_EQ(header(decide(e, r.view(), 0), "RateLimit-Policy"), "\"api\";q=1000;w=1");
  EXPECT_EQ(quota_of(e.rules()->rule("slow")->limit).quota, 30);
  EXPECT_EQ(quota_of(e.rules()->rule("slow")->limit).window_seconds, 60);
  EXPECT_EQ(quota_of(e.rules()->rule("odd")->limit).quota, 12);  // 3 per 250 ms
  EXPECT_EQ(quota_of(e.rules()->rule("odd")->limit).window_seconds, 1);
}

// The r of a RateLimit item is never more than the q of the policy it names (issue 18: a
// token bucket of 10/s and a burst of 100 said q=10;w=1 beside r=99).
TEST(Engine, ATokenBucketIsOnePolicyWhoseQuotaHoldsItsBurst) {
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [tb]}",
             "  tb: {limit: \"token-bucket:rate=10/s,burst=100\", key: const:all}\n");
  Engine e(load(yaml), 0);
  Req r;
  // 100 tokens refill in 10 s at 10/s: 100 per 10 s; 99 left, the next token within 1 s.
  const Outcome first = decide(e, r.view(), 0);
  EXPECT_EQ(header(first, "RateLimit-Policy"), "\"tb\";q=100;w=10");
  EXPECT_EQ(header(first, "RateLimit"), "\"tb\";a=99;w=1");
  for (int i = 1; i < 100; ++i) ASSERT_EQ(decide(e, r.view(), 0).verdict, Verdict::kAllow);
  // The 101st at the same instant: none left, one more in 0.1 s (1 s rounded up).
  const Outcome refused = decide(e, r.view(), 0);
  ASSERT_EQ(refused.verdict, Verdict::kDeny);
  EXPECT_EQ(header(refused, "RateLimit"), "\"tb\";a=0;w=1");
  EXPECT_EQ(header(refused, "Retry-After"), "1");
}

TEST(Engine, EachAlgorithmsPolicyReadsAsItsRateAndHoldsWhatItReports) {
  const std::string yaml = config(
      "{name: all, match: {path_prefix: /}, upstream: app, rules: [gc, gm, lb, sb, qu, fw, cc]}",
      "  gc: {limit: \"gcra:rate=30/60s,burst=15\", key: const:all}\n"
      "  gm: {limit: \"gcra:rate=1/m,burst=3\", key: const:all}\n"
      "  lb: {limit: \"leaky-bucket:rate=10/s,burst=29\", key: const:all}\n"
      "  sb: {limit: \"smooth-bursty:rate=5/s,max-burst=2s\", key: const:all}\n"
      "  qu: {limit: \"queue:rate=20/s,max-wait=500ms\", key: const:all, action: delay, "
      "max_wait: 500ms}\n"
      "  fw: {limit: \"fixed-window:limit=100,window=1m\", key: const:all}\n"
      "  cc: {limit: \"concurrency:limit=10\", key: const:all}\n");
  Engine e(load(yaml), 0);
  Req r;
  // gcra 30 per minute, burst 16: 16 refill in 32 s, within one minute: 30 per 60 s.
  // gcra 1 per minute, 4 at once: 4 minutes to refill them: 4 per 240 s.
  // leaky-bucket 10/s holding 30: 3 s to drain: 30 per 3 s.
  // smooth-bursty 5/s saving 2 s: 10 permits in 2 s: 10 per 2 s.
  // queue 20/s, one at a time: 20 per 1 s. Windows and concurrency as written.
  EXPECT_EQ(
      header(decide(e, r.view(), 0), "RateLimit-Policy"),
      "\"gc\";q=30;w=60, \"gm\";q=4;w=240, \"lb\";q=30;w=3, \"sb\";q=10;w=2, \"qu\";q=20;w=1, "
      "\"fw\";q=100;w=60, \"cc\";q=10;qu=\"concurrent-requests\"");
}

TEST(Engine, ADeniedRequestChargesNoRuleAndItsFieldsSaySo) {
  // 100 per hour beside 3 per hour: the 4th request is refused by `tight` alone; `roomy`,
  // which allowed it, still has 97 (not 96), and the next admitted one (after an hour) 96.
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [roomy, tight]}",
             "  roomy: {limit: \"fixed-window:limit=100,window=1h\", key: const:all}\n"
             "  tight: {limit: \"gcra:rate=3/h,burst=2\", key: const:all}\n");
  Engine e(load(yaml), 0);
  Req r;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kAllow);
  const Outcome denied = decide(e, r.view(), 0);
  ASSERT_EQ(denied.verdict, Verdict::kDeny);
  // tight's window is its retry (20 min = 1200 s), the same point in time as Retry-After.
  EXPECT_EQ(header(denied, "RateLimit"), "\"roomy\";a=97;w=3600, \"tight\";a=0;w=1200");
  EXPECT_EQ(header(denied, "Retry-After"), "1200");
  EXPECT_EQ(denied.decided_by, 1);
  EXPECT_EQ(metric(e, "sluice_rule_requests_total", {{"rule", "roomy"}, {"outcome", "denied"}}), 0);
  EXPECT_EQ(metric(e, "sluice_rule_requests_total", {{"rule", "tight"}, {"outcome", "denied"}}), 1);
}

// The effective window of a full bucket is one unit's time, not 0: nothing refills before a
// unit is spent, so within that time no more than all of it can be used.
TEST(Engine, AFullBucketsEffectiveWindowIsOneUnitsTime) {
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [gm, tight]}",
             "  gm: {limit: \"gcra:rate=1/m,burst=3\", key: const:all}\n"
             "  tight: {limit: \"fixed-window:limit=1,window=1h\", key: const:all}\n");
  Engine e(load(yaml), 0);
  Req r;
  const Outcome first = decide(e, r.view(), 0);
  ASSERT_EQ(first.verdict, Verdict::kAllow);
  // 3 of 4 left, the next in a minute.
  EXPECT_EQ(header(first, "RateLimit"), "\"gm\";a=3;w=60, \"tight\";a=0;w=3600");
  // Ten minutes on gm is full again; tight refuses, so gm is charged nothing and reports all
  // four, which are all a client can use within the next minute.
  const Outcome refused = decide(e, r.view(), 600 * core::kNanosPerSecond);
  ASSERT_EQ(refused.verdict, Verdict::kDeny);
  EXPECT_EQ(header(refused, "RateLimit"), "\"gm\";a=4;w=60, \"tight\";a=0;w=3000");
}

TEST(Engine, AMissingKeyIsSkippedOrDeniedWithItsOwnStatusAndCountedOnce) {
  Engine skip(load(kPerUser), 0);
  Req anonymous;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(decide(skip, anonymous.view(), 0).verdict, Verdict::kAllow);
  std::string deny = kPerUser;
  deny += "    on_missing_key: deny\n    missing_key_status: 401\n";
  Engine strict(load(deny), 0);
  const Outcome out = decide(strict, anonymous.view(), 0);
  EXPECT_EQ(out.verdict, Verdict::kDeny);
  EXPECT_TRUE(out.missing_key);
  EXPECT_EQ(out.status, 401);
  EXPECT_EQ(header(out, "Retry-After"), "");
  // Over the limit is still 429, not the missing key's 401.
  Req alice;
  alice.query = "userId=alice";
  decide(strict, alice.view(), 0);
  decide(strict, alice.view(), 0);
  EXPECT_EQ(decide(strict, alice.view(), 0).status, 429);
  // The missing key is one outcome, missing_key, not also a denial.
  EXPECT_EQ(metric(strict, "sluice_rule_requests_total", {{"outcome", "missing_key"}}), 1);
  EXPECT_EQ(metric(strict, "sluice_rule_requests_total", {{"outcome", "denied"}}), 1);
}

TEST(Engine, UnmatchedRequestsGetNoRoute) {
  Engine e(load(kPerUser), 0);
  Req r;
  r.path = "/other";
  EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kNoRoute);
}

const std::string kTrusted =
    config("{name: all, match: {path_prefix: /}, upstream: app, rules: [per-ip]}",
           "  per-ip: {limit: \"gcra:rate=1/m,burst=0\", key: client_ip}\n",
           "trusted_proxies: [10.0.0.0/8]\n");

TEST(Engine, ClientAddressComesFromXForwardedForOnlyBehindATrustedProxy) {
  Engine e(load(kTrusted), 0);
  Req via_proxy;  // peer 10.1.1.1 is trusted: the client is 203.0.113.7
  via_proxy.headers = {{"X-Forwarded-For", "198.51.100.1, 203.0.113.7"}};
  EXPECT_EQ(decide(e, via_proxy.view(), 0).client(), "203.0.113.7");
  Req spoofer;  // an untrusted peer's X-Forwarded-For is ignored
  spoofer.peer = "192.0.2.9";
  spoofer.headers = {{"X-Forwarded-For", "203.0.113.7"}};
  EXPECT_EQ(decide(e, spoofer.view(), 0).client(), "192.0.2.9");
  EXPECT_EQ(decide(e, spoofer.view(), 0).verdict, Verdict::kDeny);  // its own budget, spent
}

TEST(Engine, APeerParsedOnceByItsConnectionIsReadAsItsText) {
  // The gateway parses a connection's peer once (RequestView::peer_address); the text then
  // stays unread, so a stale text shows if it were used instead.
  Engine e(load(kTrusted), 0);
  proto::http::IpAddress proxy;
  ASSERT_TRUE(proxy.parse("10.1.1.1"));
  Req via_proxy;
  via_proxy.peer = "192.0.2.9";
  via_proxy.headers = {{"X-Forwarded-For", "203.0.113.8"}};
  RequestView v = via_proxy.view();
  v.peer_address = &proxy;  // trusted: X-Forwarded-For is believed
  EXPECT_EQ(decide(e, v, 0).client(), "203.0.113.8");
  proto::http::IpAddress direct;
  ASSERT_TRUE(direct.parse("::ffff:192.0.2.10"));
  v.peer_address = &direct;  // untrusted: the peer itself, canonical
  EXPECT_EQ(decide(e, v, 0).client(), "192.0.2.10");
}

TEST(Engine, OneClientIsOneKeyHoweverItsAddressIsWritten) {
  Engine e(load(kTrusted), 0);
  // From a trusted balancer: a port, the IPv4-mapped form and IPv6 spellings are one client.
  for (const char* spelling :
       {"3.3.3.3:4711", "3.3.3.3:4712", "::ffff:3.3.3.3", "[::ffff:3.3.3.3]:80"}) {
    Req r;
    r.headers = {{"X-Forwarded-For", spelling}};
    EXPECT_EQ(decide(e, r.view(), 0).client(), "3.3.3.3") << spelling;
  }
  for (const char* spelling : {"2001:DB8::1", "2001:db8:0:0:0:0:0:1", "[2001:db8::1]:443"}) {
    Req r;
    r.headers = {{"X-Forwarded-For", spelling}};
    EXPECT_EQ(decide(e, r.view(), 0).client(), "2001:db8::1") << spelling;
  }
  // What is not an address is no key: the trusted proxy that sent it stands for the client.
  for (const char* junk : {"garbage", "unknown", "1.2.3.4.5", "3.3.3.3, unknown"}) {
    Req r;
    r.headers = {{"X-Forwarded-For", junk}};
    EXPECT_EQ(decide(e, r.view(), 0).client(), "10.1.1.1") << junk;
  }
  Req forwarded;
  forwarded.headers = {{"Forwarded", "for=\"[2001:db8::7]:8080\";proto=https"}};
  EXPECT_EQ(decide(e, forwarded.view(), 0).client(), "2001:db8::7");
  Req real_ip;
  real_ip.headers = {{"X-Real-IP", "198.51.100.4"}};
  EXPECT_EQ(decide(e, real_ip.view(), 0).client(), "198.51.100.4");
}

// One request per minute per network: IPv4 /24 and IPv6 /64.
const std::string kPerNetwork =
    config("{name: all, match: {path_prefix: /}, upstream: app, rules: [per-net]}",
           "  per-net: {limit: \"gcra:rate=1/m,burst=0\", key: client_ip/24/64}\n");

Verdict from(Engine& e, const char* peer) {
  Req r;
  r.peer = peer;
  return decide(e, r.view(), 0).verdict;
}

TEST(Engine, AClientIpPrefixKeyMakesOneNetworkOneClient) {
  Engine e(load(kPerNetwork), 0);
  EXPECT_EQ(from(e, "203.0.113.7"), Verdict::kAllow);
  EXPECT_EQ(from(e, "203.0.113.200"), Verdict::kDeny);  // the same /24: its budget is spent
  EXPECT_EQ(from(e, "203.0.114.7"), Verdict::kAllow);   // the next /24
  EXPECT_EQ(from(e, "2001:db8:1:2::1"), Verdict::kAllow);
  EXPECT_EQ(from(e, "2001:db8:1:2:ffff:ffff:ffff:ffff"), Verdict::kDeny);  // the same /64
  EXPECT_EQ(from(e, "2001:db8:1:3::1"), Verdict::kAllow);
}

TEST(Engine, AClientIpPrefixKeyIsTheNetworkWrittenOut) {
  const config::RuleSet rules = load(kPerNetwork);
  config::KeyPart part = rules.rules[0].key[0];
  std::vector<Header> none;
  const RequestView view{"GET", "h", "/", "", "x", none};
  const auto key = [&](std::string_view client) {
    std::string text;
    EXPECT_TRUE(detail::request_key_text({&part, 1}, view, client, "all", text));
    // The hash is the text's: a check API call naming the network meets the same state.
    table::KeyHash hash;
    KeyTag tag;
    EXPECT_TRUE(detail::hash_request_key({&part, 1}, view, client, "all", hash, tag));
    EXPECT_EQ(hash.bucket, table::hash_key(text).bucket);
    EXPECT_EQ(hash.fingerprint, table::hash_key(text).fingerprint);
    // The top keys see the same text, under the same hash.
    EXPECT_EQ(std::string_view(tag.text, tag.size), text);
    EXPECT_EQ(tag.hash, hash.bucket);
    return text;
  };
  EXPECT_EQ(key("203.0.113.77"), "203.0.113.0/24");
  EXPECT_EQ(key("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  part.v4_prefix = 32;  // client_ip/64: IPv4 stays whole, without a suffix
  EXPECT_EQ(key("203.0.113.77"), "203.0.113.77");
  part.v6_prefix = 0;
  EXPECT_EQ(key("2001:db8::1"), "::/0");
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
    const Outcome v = decide(e, r.view(), 0);
    if (v.verdict == Verdict::kAllow) delays.push_back(v.delay);
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
  EXPECT_FALSE(decide(e, r.view(), 0).dry_run_denied());
  for (int i = 0; i < 2; ++i) {
    const Outcome out = decide(e, r.view(), 0);
    EXPECT_EQ(out.verdict, Verdict::kAllow);
    EXPECT_TRUE(out.dry_run_denied());
  }
  EXPECT_EQ(metric(e, "sluice_rule_requests_total",
                   {{"route", "all"}, {"rule", "shadow"}, {"outcome", "dry_run_denied"}}),
            2);
}

TEST(Engine, ReloadKeepsStateOfUnchangedLimitsAndRetunesChangedOnes) {
  Engine e(load(kPerUser), 0);
  Req r;
  r.query = "userId=alice";
  decide(e, r.view(), 0);
  decide(e, r.view(), 0);
  EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kDeny);  // alice spent her burst
  // Same rule: alice is still out of tokens after the reload.
  EXPECT_TRUE(e.apply(load(kPerUser), 0).empty());
  EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kDeny);
  // Rate raised to 10/s: state kept (still empty at t=0), new rate applies 100 ms later.
  std::string faster = kPerUser;
  faster.replace(faster.find("rate=1/s"), 8, "rate=10/s");
  EXPECT_TRUE(e.apply(load(faster), 0).empty());
  EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kDeny);
  EXPECT_EQ(decide(e, r.view(), 100 * kNanosPerMilli).verdict, Verdict::kAllow);
}

TEST(Engine, ABadRuleSetIsRefusedAndTheOldOneKeepsServing) {
  Engine e(load(kPerUser), 0);
  config::RuleSet bad = load(kPerUser);
  bad.routes.front().rules = {"no-such-rule"};
  EXPECT_FALSE(e.apply(bad, 0).empty());
  Req r;
  r.query = "userId=alice";
  EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kAllow);
  EXPECT_EQ(e.version(), 1u);
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
  for (int i = 0; i < 6; ++i) heavy_passed += decide(e, heavy.view(), 0).verdict == Verdict::kAllow;
  EXPECT_EQ(heavy_passed, 4);  // 3 from the global bucket, then 1 of its own
  EXPECT_EQ(decide(e, light.view(), 0).verdict, Verdict::kAllow);  // its own token
}

TEST(Engine, ConcurrencyRuleHoldsLeasesUntilTheOutcomeIsDropped) {
  const std::string yaml =
      config("{name: all, match: {path_prefix: /}, upstream: app, rules: [conn]}",
             "  conn: {limit: \"concurrency:limit=1\", key: client_ip}\n");
  Engine e(load(yaml), 0);
  Req r;
  {
    const Outcome first = decide(e, r.view(), 0);
    EXPECT_EQ(first.verdict, Verdict::kAllow);
    EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kDeny);
    EXPECT_EQ(header(first, "RateLimit-Policy"), "\"conn\";q=1;qu=\"concurrent-requests\"");
  }
  EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kAllow);
}

}  // namespace
}  // namespace sluice::engine

namespace sluice::engine {
namespace {

TEST(EngineCheck, ARuleByNameDecidesOneKeyAndDescribesIt) {
  Engine e(load(kPerUser), 0);
  EXPECT_EQ(decide(e, RuleAsk{"per-user", "alice", 1}, 0).verdict, Verdict::kAllow);
  EXPECT_EQ(decide(e, RuleAsk{"per-user", "alice", 1}, 0).verdict, Verdict::kAllow);
  const Outcome third = decide(e, RuleAsk{"per-user", "alice", 1}, 0);
  EXPECT_EQ(third.verdict, Verdict::kDeny);
  EXPECT_EQ(header(third, "Retry-After"), "1");
  EXPECT_EQ(header(third, "RateLimit"), "\"per-user\";a=0;w=1");
  const Outcome unknown = decide(e, RuleAsk{"no-such", "alice", 1}, 0);
  EXPECT_EQ(unknown.verdict, Verdict::kInvalid);
  EXPECT_EQ(unknown.error_kind, ErrorKind::kUnknownRule);
}

TEST(EngineCheck, TheCheckApiAndTheGatewayShareTheRulesState) {
  Engine e(load(kPerUser), 0);
  Req alice;
  alice.query = "userId=alice";
  decide(e, RuleAsk{"per-user", "alice", 2}, 0);  // both tokens, through the decision service
  EXPECT_EQ(decide(e, alice.view(), 0).verdict, Verdict::kDeny);
}

TEST(EngineCheck, EachFrontendCountsItsDecisionsUnderItsOwnLabelAndNoZeroSeriesIsWritten) {
  Engine e(load(kPerUser), 0);
  Req alice;
  alice.query = "userId=alice";
  decide(e, alice.view(), 0);                                               // gateway: allowed
  decide(e, RuleAsk{"per-user", "bob", 1}, 0);                              // check API: allowed
  decide(e, RuleAsk{"per-user", "bob", 2, Via::kSluiceCheck}, 0);           // SLUICE.CHECK: denied
  for (int i = 0; i < 3; ++i) decide(e, ThrottleAsk{"t", 1, 1, 60, 1}, 0);  // 2 allowed, 1 not
  const auto n = [&](std::string_view frontend, std::string_view outcome) {
    return metric(e, "sluice_rule_requests_total", {{"frontend", frontend}, {"outcome", outcome}});
  };
  EXPECT_EQ(n("gateway", "allowed"), 1);
  EXPECT_EQ(n("check_api", "allowed"), 1);
  EXPECT_EQ(n("check_api", "denied"), 0);
  EXPECT_EQ(n("sluice_check", "denied"), 1);
  EXPECT_EQ(n("cl_throttle", "allowed"), 2);
  EXPECT_EQ(n("cl_throttle", "denied"), 1);
  metrics::Registry registry;
  const auto registration = e.register_metrics(registry);
  const std::string text = registry.text();
  EXPECT_NE(text.find("sluice_rule_requests_total{frontend=\"gateway\",route=\"api\","
                      "rule=\"per-user\",outcome=\"allowed\"} 1\n"),
            std::string::npos)
      << text;
  // 5 series: one per (frontend, outcome) above with a count; none at 0.
  std::size_t series = 0;
  for (std::size_t at = 0;
       (at = text.find("\nsluice_rule_requests_total{", at)) != std::string::npos; ++at) {
    ++series;
  }
  EXPECT_EQ(series, 5u) << text;
}

TEST(EngineCheck, AKeyOfSeveralPartsIsTheSameStateWhereverItIsAsked) {
  const std::string yaml = config(
      "{name: all, match: {path_prefix: /}, upstream: app, rules: [pair]}",
      "  pair: {limit: \"fixed-window:limit=1,window=1h\", key: [header:X-Tenant, method]}\n");
  Engine e(load(yaml), 0);
  Req r;
  r.headers = {{"X-Tenant", "acme"}};
  EXPECT_EQ(decide(e, r.view(), 0).verdict, Verdict::kAllow);  // hashed from its two parts
  EXPECT_EQ(decide(e, RuleAsk{"pair", "acme|GET", 1}, 0).verdict, Verdict::kDeny);
  EXPECT_EQ(decide(e, RuleAsk{"pair", "acme|POST", 1}, 0).verdict, Verdict::kAllow);
}

TEST(EngineCheck, InlineLimitsGetATablePerSpecAndRefuseBadSpecs) {
  Engine e(load(kPerUser), 0);
  EXPECT_EQ(decide(e, InlineAsk{"gcra:rate=1/s,burst=0", "k", 1, 0}, 0).verdict, Verdict::kAllow);
  EXPECT_EQ(decide(e, InlineAsk{"gcra:burst=0,rate=1/s", "k", 1, 0}, 0).verdict, Verdict::kDeny)
      << "the same limit written in another order shares the table";
  EXPECT_EQ(decide(e, InlineAsk{"gcra:rate=1/s,burst=0", "other", 1, 0}, 0).verdict,
            Verdict::kAllow);
  const Outcome bad = decide(e, InlineAsk{"gcra:rate=1/s", "k", 1, 0}, 0);
  EXPECT_EQ(bad.verdict, Verdict::kInvalid);
  EXPECT_EQ(bad.error_kind, ErrorKind::kBadLimit);
  EXPECT_NE(bad.error.find("burst"), std::string::npos);
}

const std::string kWorkers =
    config("{name: all, match: {path_prefix: /}, upstream: app, rules: [jobs]}",
           "  jobs: {limit: \"concurrency:limit=1\", key: const:all, permit_ttl: 30s}\n");

TEST(EngineCheck, AConcurrencyPermitGoesAroundAcquireDeniedReleaseAcquire) {
  Engine e(load(kWorkers), 0);
  const Outcome first = decide(e, RuleAsk{"jobs", "batch", 1}, 0);
  ASSERT_EQ(first.verdict, Verdict::kAllow);
  ASSERT_FALSE(first.lease_token.empty());
  EXPECT_EQ(first.lease_ttl, 30 * kNanosPerSecond);
  EXPECT_EQ(decide(e, RuleAsk{"jobs", "batch", 1}, 0).verdict, Verdict::kDeny);
  EXPECT_TRUE(e.release_lease(first.lease_token));
  EXPECT_FALSE(e.release_lease(first.lease_token)) << "a token gives its permit back once";
  EXPECT_EQ(decide(e, RuleAsk{"jobs", "batch", 1}, 0).verdict, Verdict::kAllow);
}

TEST(EngineCheck, ARuleHoldsAtMostMaxPermitsAndTheGaugeCountsThem) {
  // concurrency 100 per key, but at most 3 permits held for the rule's callers in all.
  Engine e(load(config("{name: all, match: {path_prefix: /}, upstream: app, rules: [jobs]}",
                       "  jobs: {limit: \"concurrency:limit=100\", key: client_ip,"
                       " max_permits: 3}\n")),
           0);
  std::vector<std::string> tokens;
  for (const char* key : {"a", "b", "a"}) {
    const Outcome held = decide(e, RuleAsk{"jobs", key, 1}, 0);
    ASSERT_EQ(held.verdict, Verdict::kAllow) << key;
    tokens.push_back(held.lease_token);
  }
  const Outcome full = decide(e, RuleAsk{"jobs", "c", 1}, 0);
  EXPECT_EQ(full.verdict, Verdict::kInvalid);
  EXPECT_EQ(full.error_kind, ErrorKind::kExhausted);
  EXPECT_NE(full.error.find("max_permits"), std::string::npos) << full.error;
  EXPECT_TRUE(full.lease_token.empty());
  metrics::Registry registry;
  const auto registered = e.register_metrics(registry);
  EXPECT_NE(registry.text().find("sluice_permits_held{rule=\"jobs\"} 3"), std::string::npos)
      << registry.text();
  // The refused check took no permit of key c's: one given back makes room for it.
  EXPECT_TRUE(e.release_lease(tokens.front()));
  EXPECT_EQ(decide(e, RuleAsk{"jobs", "c", 1}, 0).verdict, Verdict::kAllow);
}

TEST(EngineCheck, APermitNeverGivenBackExpiresAtItsTtl) {
  Engine e(load(kWorkers), 0);
  const Outcome held = decide(e, RuleAsk{"jobs", "batch", 1}, 0);
  ASSERT_EQ(held.verdict, Verdict::kAllow);
  e.expire_leases(29 * kNanosPerSecond);
  EXPECT_EQ(decide(e, RuleAsk{"jobs", "batch", 1}, 0).verdict, Verdict::kDeny);
  e.expire_leases(30 * kNanosPerSecond);
  EXPECT_EQ(decide(e, RuleAsk{"jobs", "batch", 1}, 0).verdict, Verdict::kAllow);
  EXPECT_FALSE(e.release_lease(held.lease_token)) << "expired";
}

TEST(EngineThrottle, AnswersAsRedisCellWithTheParametersOfEachCall) {
  Engine e(config::RuleSet{}, 0);
  // max_burst 4, 1 per second: 5 at once, then refused with a retry of 1 s.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(decide(e, ThrottleAsk{"foo", 4, 1, 1, 1}, 0).verdict, Verdict::kAllow) << i;
  }
  const Outcome refused = decide(e, ThrottleAsk{"foo", 4, 1, 1, 1}, 0);
  EXPECT_EQ(refused.verdict, Verdict::kDeny);
  EXPECT_EQ(refused.total.retry_after, kNanosPerSecond);
  EXPECT_EQ(refused.total.limit, 5);
  EXPECT_EQ(decide(e, ThrottleAsk{"foo", 4, 0, 1, 1}, 0).error,
            "Cell error: Zero rates are not supported");
}

}  // namespace
}  // namespace sluice::engine
