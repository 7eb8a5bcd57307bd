// on_deny: {block: D}: a key its rule refuses is refused for D, its limit not asked, however
// soon the limit would admit it again; other keys go on; the block ends, or is lifted by a
// KeyAsk. Through the gateway's request and the decision service's RuleAsk alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/config/rule_json.hpp"
#include "sluice/engine/engine.hpp"
#include "support/units.hpp"

namespace sluice::engine {
namespace {

using test::units::kSecond;

// One request a second per API key; a key that asks for a second one is banned for 60s.
const std::string kBlockConfig =
    "listen: 127.0.0.1:8080\n"
    "upstreams:\n  app: {servers: [127.0.0.1:8081]}\n"
    "routes:\n  - {name: all, match: {path_prefix: /}, upstream: app, rules: [login]}\n"
    "rules:\n"
    "  login:\n"
    "    limit: \"fixed-window:limit=1,window=1s\"\n"
    "    key: header:X-Api-Key\n"
    "    on_deny: {block: 60s}\n";

TEST(EngineBlocks, AKeyOverItsLimitIsRefusedForTheBlockTimeThoughItsLimitWouldAdmit) {
  Engine e(load_rules(kBlockConfig), 0);
  const std::vector<Header> a = {{"X-Api-Key", "a"}};
  const std::vector<Header> b = {{"X-Api-Key", "b"}};
  const RequestView ra{"GET", "example.com", "/x", "", "10.1.1.1", a};
  const RequestView rb{"GET", "example.com", "/x", "", "10.1.1.1", b};
  EXPECT_EQ(ask(e, ra, 0).verdict, Verdict::kAllow);
  const Outcome over = ask(e, ra, 100'000'000);  // the second in its window: refused, blocked
  EXPECT_EQ(over.verdict, Verdict::kDeny);
  EXPECT_EQ(over.total.retry_after, 60 * kSecond) << "the retry time is the block's, not 0.9s";

  // At 5s the window would admit a again; the block refuses it, with the block's time left.
  const Outcome blocked = ask(e, ra, 5 * kSecond);
  EXPECT_EQ(blocked.verdict, Verdict::kDeny);
  EXPECT_EQ(blocked.status, 429);
  EXPECT_EQ(blocked.total.retry_after, 60 * kSecond + 100'000'000 - 5 * kSecond);
  EXPECT_EQ(ask(e, rb, 5 * kSecond).verdict, Verdict::kAllow) << "another key is not blocked";

  // The block ends 60s after the refusal: 60.1s.
  EXPECT_EQ(ask(e, ra, 60 * kSecond).verdict, Verdict::kDeny);
  EXPECT_EQ(ask(e, ra, 61 * kSecond).verdict, Verdict::kAllow);
}

TEST(EngineBlocks, ABlockedKeyIsNotChargedAndABlockIsLiftedByAKeyAsk) {
  Engine e(load_rules(kBlockConfig), 0);
  EXPECT_EQ(ask(e, RuleAsk{"login", "a", 1}, 0).verdict, Verdict::kAllow);
  EXPECT_EQ(ask(e, RuleAsk{"login", "a", 1}, 0).verdict, Verdict::kDeny);  // blocked until 60s

  const Outcome look = ask(e, KeyAsk{"login", "a", KeyOp::kBlock}, 10 * kSecond);
  EXPECT_TRUE(look.key_seen);
  EXPECT_EQ(look.total.retry_after, 50 * kSecond);
  EXPECT_FALSE(ask(e, KeyAsk{"login", "b", KeyOp::kBlock}, 10 * kSecond).key_seen);
  // Refused while blocked: the limit is not asked, so its window is not spent at 10s.
  EXPECT_EQ(ask(e, RuleAsk{"login", "a", 1}, 10 * kSecond).verdict, Verdict::kDeny);

  EXPECT_TRUE(ask(e, KeyAsk{"login", "a", KeyOp::kUnblock}, 10 * kSecond).key_seen);
  EXPECT_FALSE(ask(e, KeyAsk{"login", "a", KeyOp::kUnblock}, 10 * kSecond).key_seen);
  EXPECT_EQ(ask(e, RuleAsk{"login", "a", 1}, 10 * kSecond).verdict, Verdict::kAllow);
}

TEST(EngineBlocks, ARuleWithoutOnDenyBlocksNothingAndHasNoBlocksToShow) {
  Engine e(
      load_rules("rules:\n  plain: {limit: \"fixed-window:limit=1,window=1s\", key: client_ip}\n"),
      0);
  EXPECT_EQ(ask(e, RuleAsk{"plain", "a", 1}, 0).verdict, Verdict::kAllow);
  EXPECT_EQ(ask(e, RuleAsk{"plain", "a", 1}, 0).verdict, Verdict::kDeny);
  EXPECT_EQ(ask(e, RuleAsk{"plain", "a", 1}, kSecond).verdict, Verdict::kAllow);
  const Outcome look = ask(e, KeyAsk{"plain", "a", KeyOp::kBlock}, kSecond);
  EXPECT_EQ(look.verdict, Verdict::kInvalid);
  EXPECT_EQ(look.error_kind, ErrorKind::kNoBlocks);
}

TEST(EngineBlocks, TheBlockIsWrittenBackInTheRuleJson) {
  const config::RuleSet rules = load_rules(kBlockConfig);
  const std::string json = config::rule_to_json(rules.rules.front());
  EXPECT_NE(json.find("\"on_deny\":{\"block\":\"1m\"}"), std::string::npos) << json;
}

}  // namespace
}  // namespace sluice::engine
