// The engine's KeyAsk: a rule's key looked at without charging it, and reset, whichever
// frontend charged it (the gateway hashes a key's parts, the decision service is given its
// joined text); refusals for an unknown rule, a concurrency reset, and Redis not answering.
#include <gtest/gtest.h>

#include <string>

#include "engine_fixture.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine {
namespace {

const std::string kKeysConfig =
    "listen: 127.0.0.1:8080\n"
    "upstreams:\n  app: {servers: [127.0.0.1:8081]}\n"
    "routes:\n  - {name: all, match: {path_prefix: /}, upstream: app, rules: [pair]}\n"
    "rules:\n"
    "  pair: {limit: \"fixed-window:limit=2,window=1h\", key: [header:X-Tenant, method]}\n"
    "  conc: {limit: \"concurrency:limit=2\", key: header:X-Tenant}\n";

TEST(EngineKeys, AGatewayKeyIsPeekedByItsJoinedTextWithoutChargingIt) {
  Engine e(load_rules(kKeysConfig), 0);
  const std::vector<Header> headers = {{"X-Tenant", "acme"}};
  const RequestView r{"GET", "example.com", "/x", "", "10.1.1.1", headers};
  EXPECT_EQ(ask(e, r).verdict, Verdict::kAllow);  // 1 of 2 spent by the gateway

  const Outcome never = ask(e, KeyAsk{"pair", "acme|POST", KeyOp::kPeek});
  EXPECT_FALSE(never.key_seen);
  EXPECT_EQ(never.total.remaining, 2);
  EXPECT_EQ(never.total.limit, 2);

  for (int i = 0; i < 3; ++i) {
    const Outcome seen = ask(e, KeyAsk{"pair", "acme|GET", KeyOp::kPeek});
    EXPECT_EQ(seen.verdict, Verdict::kAllow);
    EXPECT_TRUE(seen.key_seen);
    EXPECT_TRUE(seen.total.allowed);
    EXPECT_EQ(seen.total.remaining, 1) << "look " << i << " charged the key";
  }
  EXPECT_EQ(ask(e, RuleAsk{"pair", "acme|GET", 1}).verdict, Verdict::kAllow);  // the last one
  const Outcome empty = ask(e, KeyAsk{"pair", "acme|GET", KeyOp::kPeek});
  EXPECT_FALSE(empty.total.allowed);
  EXPECT_EQ(empty.total.remaining, 0);
  EXPECT_EQ(empty.total.retry_after, 3600 * core::kNanosPerSecond);
  EXPECT_EQ(ask(e, r).verdict, Verdict::kDeny);
}

TEST(EngineKeys, AResetGivesTheNextRequestAFullQuota) {
  Engine e(load_rules(kKeysConfig), 0);
  for (int i = 0; i < 2; ++i) ask(e, RuleAsk{"pair", "acme|GET", 1});
  EXPECT_EQ(ask(e, RuleAsk{"pair", "acme|GET", 1}).verdict, Verdict::kDeny);

  const Outcome reset = ask(e, KeyAsk{"pair", "acme|GET", KeyOp::kReset});
  EXPECT_EQ(reset.verdict, Verdict::kAllow);
  EXPECT_TRUE(reset.key_seen);  // there was state to forget
  EXPECT_EQ(reset.total.remaining, 2);
  EXPECT_FALSE(ask(e, KeyAsk{"pair", "acme|GET", KeyOp::kReset}).key_seen);

  const Outcome next = ask(e, RuleAsk{"pair", "acme|GET", 1});
  EXPECT_EQ(next.verdict, Verdict::kAllow);
  EXPECT_EQ(next.total.remaining, 1);
}

TEST(EngineKeys, UnknownRulesAndConcurrencyResetsAreRefused) {
  Engine e(load_rules(kKeysConfig), 0);
  const Outcome unknown = ask(e, KeyAsk{"nope", "k", KeyOp::kPeek});
  EXPECT_EQ(unknown.verdict, Verdict::kInvalid);
  EXPECT_EQ(unknown.error_kind, ErrorKind::kUnknownRule);
  EXPECT_EQ(unknown.error, "unknown rule 'nope'");

  const Outcome held = ask(e, RuleAsk{"conc", "acme", 1});
  ASSERT_EQ(held.verdict, Verdict::kAllow);
  EXPECT_EQ(ask(e, KeyAsk{"conc", "acme", KeyOp::kPeek}).total.remaining, 1);
  const Outcome reset = ask(e, KeyAsk{"conc", "acme", KeyOp::kReset});
  EXPECT_EQ(reset.verdict, Verdict::kInvalid);
  EXPECT_EQ(reset.error_kind, ErrorKind::kNotResettable);
  EXPECT_EQ(error_field(reset.error_kind), "rule");
}

TEST(EngineKeys, ARedisRuleWithoutAStoreIsUnavailableNotAFailurePolicysAnswer) {
  // Engine::decide has no store: a look must not pass off fail-open's "allowed" as the state.
  const std::string yaml = kKeysConfig +
                           "  shared: {limit: \"gcra:rate=1/s,burst=1\", key: header:X-Tenant, "
                           "storage: redis, on_failure: fail-open}\n"
                           "redis: {url: \"redis://127.0.0.1:1\"}\n";
  Engine e(load_rules(yaml), 0);
  for (KeyOp op : {KeyOp::kPeek, KeyOp::kReset}) {
    const Outcome out = ask(e, KeyAsk{"shared", "acme", op});
    EXPECT_EQ(out.verdict, Verdict::kInvalid);
    EXPECT_EQ(out.error_kind, ErrorKind::kUnavailable);
    EXPECT_EQ(error_field(out.error_kind), "storage");
  }
}

}  // namespace
}  // namespace sluice::engine
