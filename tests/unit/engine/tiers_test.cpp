// Tiers and overrides: a rule charges each key against the limit its tier (a request attribute,
// believed in the gateway only from a trusted proxy) or its override selects, each with its own
// table; and on_change says what a change of a rule's numbers does to the keys already seen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine {
namespace {

// free: 2 at once, pro: 5 at once (rate 1/m: nothing refills within a test).
const std::string kTiers =
    "listen: 127.0.0.1:8080\n"
    "trusted_proxies: [10.0.0.1]\n"
    "upstreams:\n  app: {servers: [127.0.0.1:8081]}\n"
    "routes:\n  - {name: all, upstream: app, rules: [plan]}\n"
    "rules:\n"
    "  plan:\n"
    "    key: header:X-User\n"
    "    tier: header:X-Plan\n"
    "    tiers:\n"
    "      default: token-bucket:rate=1/m,burst=2\n"
    "      pro: token-bucket:rate=1/m,burst=5\n"
    "    overrides:\n"
    "      customer-42: token-bucket:rate=1/m,burst=9\n";

int admitted(Engine& e, const RequestView& r) {
  int n = 0;
  while (n < 100 && ask(e, r).verdict == Verdict::kAllow) ++n;
  return n;
}

TEST(EngineTiers, ATrustedProxysPlanHeaderPicksTheTierAndAnUntrustedClientsDoesNot) {
  Engine e(load_rules(kTiers), 0);
  const std::vector<Header> a = {{"X-User", "a"}, {"X-Plan", "pro"}};
  const std::vector<Header> b = {{"X-User", "b"}, {"X-Plan", "pro"}};
  const std::vector<Header> c = {{"X-User", "c"}, {"X-Plan", "gold"}};
  EXPECT_EQ(admitted(e, RequestView{"GET", "h", "/", "", "10.0.0.1", a}), 5) << "pro, via proxy";
  EXPECT_EQ(admitted(e, RequestView{"GET", "h", "/", "", "203.0.113.9", b}), 2)
      << "a client sending X-Plan: pro itself gets the default tier";
  EXPECT_EQ(admitted(e, RequestView{"GET", "h", "/", "", "10.0.0.1", c}), 2)
      << "an unknown tier is the default";
}

TEST(EngineTiers, TheRateLimitFieldsShowTheTiersLimit) {
  Engine e(load_rules(kTiers), 0);
  const std::vector<Header> h = {{"X-User", "a"}, {"X-Plan", "pro"}};
  const Outcome out = ask(e, RequestView{"GET", "h", "/", "", "10.0.0.1", h});
  ASSERT_EQ(out.applied.size(), 1u);
  EXPECT_EQ(out.applied[0].decision.remaining, 4);
  EXPECT_EQ(out.applied[0].limit.quota.burst, 5);
}

TEST(EngineTiers, TheDecisionServiceTakesTheTierFromTheAskAndTheOverrideComesFirst) {
  Engine e(load_rules(kTiers), 0);
  EXPECT_EQ(ask(e, RuleAsk{"plan", "u", 1, Via::kCheckApi, "pro"}).total.remaining, 4);
  EXPECT_EQ(ask(e, RuleAsk{"plan", "v", 1}).total.remaining, 1) << "no tier: default";
  EXPECT_EQ(ask(e, RuleAsk{"plan", "customer-42", 1, Via::kCheckApi, "pro"}).total.remaining, 8)
      << "the key's override wins over its tier";
  const std::vector<Header> h = {{"X-User", "customer-42"}};
  EXPECT_EQ(ask(e, RequestView{"GET", "h", "/", "", "203.0.113.9", h}).total.remaining, 7)
      << "the gateway charges the same override's table";
}

TEST(EngineTiers, EachTierHasItsOwnTableSoAKeyMovedToAnotherTierStartsThereAfresh) {
  Engine e(load_rules(kTiers), 0);
  EXPECT_EQ(ask(e, RuleAsk{"plan", "u", 2}).total.remaining, 0);  // default spent
  EXPECT_EQ(ask(e, RuleAsk{"plan", "u", 1}).verdict, Verdict::kDeny);
  EXPECT_EQ(ask(e, RuleAsk{"plan", "u", 1, Via::kCheckApi, "pro"}).total.remaining, 4);
}

TEST(EngineTiers, AnOverrideAddedByAChangeTakesEffectAndKeepsTheOtherKeysState) {
  config::RuleSet rules = load_rules(kTiers);
  Engine e(rules, 0);
  EXPECT_EQ(ask(e, RuleAsk{"plan", "u", 1}).total.remaining, 1);
  rules.rules[0].overrides.push_back({"u", "token-bucket:rate=1/m,burst=3",
                                      *spec::parse_limit_spec("token-bucket:rate=1/m,burst=3"), 0});
  ASSERT_TRUE(e.apply(rules, 0).empty());
  EXPECT_EQ(ask(e, RuleAsk{"plan", "u", 1}).total.remaining, 2) << "u's override: 3, one spent";
  EXPECT_EQ(ask(e, RuleAsk{"plan", "customer-42", 1}).total.remaining, 8);
}

// A token bucket of burst 10 with 8 spent (2 left), changed to burst 20: `keep` leaves 2
// (Bucket4j's AS_IS), `reset` fills it (20), `proportional` keeps its fifth (4). The next
// request takes one of them.
std::int64_t remaining_after_change(const std::string& on_change, const std::string& algo_old,
                                    const std::string& algo_new) {
  const std::string head =
      "rules:\n  r:\n    key: client_ip\n    on_change: " + on_change + "\n    limit: ";
  Engine e(load_rules(head + algo_old + "\n"), 0);
  EXPECT_EQ(ask(e, RuleAsk{"r", "k", 8}).verdict, Verdict::kAllow);
  EXPECT_TRUE(e.apply(load_rules(head + algo_new + "\n"), 0).empty());
  return ask(e, RuleAsk{"r", "k", 1}).total.remaining;
}

TEST(EngineOnChange, ATokenBucketOfBurst10With8SpentChangedToBurst20) {
  const std::string from = "token-bucket:rate=1/m,burst=10";
  const std::string to = "token-bucket:rate=1/m,burst=20";
  EXPECT_EQ(remaining_after_change("keep", from, to), 1);          // 2 kept, 1 taken
  EXPECT_EQ(remaining_after_change("reset", from, to), 19);        // full again
  EXPECT_EQ(remaining_after_change("proportional", from, to), 3);  // 2/10 of 20 = 4
}

// GCRA's burst 10 passes 11 at once; 8 spent leaves 3. keep holds the 8 spent (TAT kept): 21
// - 8 = 13; proportional keeps 8/11 of the new 21 spent: 15.27 -> 5.73 left.
TEST(EngineOnChange, AGcraOfBurst10With8SpentChangedToBurst20) {
  const std::string from = "gcra:rate=1/m,burst=10";
  const std::string to = "gcra:rate=1/m,burst=20";
  EXPECT_EQ(remaining_after_change("keep", from, to), 12);         // 13 left, 1 taken
  EXPECT_EQ(remaining_after_change("reset", from, to), 20);        // 21 left, 1 taken
  EXPECT_EQ(remaining_after_change("proportional", from, to), 4);  // 5.7 left, 1 taken
}

TEST(EngineOnChange, AFixedWindowOfLimit10With8CountedChangedToLimit20) {
  const std::string from = "fixed-window:limit=10,window=1h";
  const std::string to = "fixed-window:limit=20,window=1h";
  EXPECT_EQ(remaining_after_change("keep", from, to), 11);         // 8 counted, 1 more
  EXPECT_EQ(remaining_after_change("reset", from, to), 19);        // a new count
  EXPECT_EQ(remaining_after_change("proportional", from, to), 3);  // 16 counted, 1 more
}

}  // namespace
}  // namespace sluice::engine
