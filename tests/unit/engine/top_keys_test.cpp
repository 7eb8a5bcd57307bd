// A rule's top keys: the space-saving sketch's figures by hand (exact under its capacity, a
// newcomer past it starting from the lowest count), its five-minute window, long keys cut,
// and the engine noting the gateway's and the decision service's decisions of one rule.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/table/key_hash.hpp"
#include "top_sketch.hpp"

namespace sluice::engine {
namespace {

constexpr core::Nanos kMinute = 60 * core::kNanosPerSecond;

KeyTag tag(std::string_view key) {
  KeyTag t;
  t.clear(table::hash_key(key).bucket);
  t.append(key);
  return t;
}

void note(detail::TopSketch& s, std::string_view key, int requests, int denied, core::Nanos now) {
  for (int i = 0; i < requests; ++i) s.note(tag(key), i < denied, now);
}

struct Row {
  std::string key;
  std::uint64_t requests;
  std::uint64_t denied;
  bool operator==(const Row&) const = default;
};

std::vector<Row> rows(const std::vector<TopKey>& keys) {
  std::vector<Row> out;
  for (const auto& k : keys) out.push_back({k.key, k.requests, k.denied});
  return out;
}

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << "{" << r.key << " " << r.requests << " " << r.denied << "}";
}

TEST(TopKeys, UnderItsCapacityEachKeyIsCountedExactlyAndRankedByWhatIsAsked) {
  auto s = std::make_unique<detail::TopSketch>();
  note(*s, "a", 5, 3, 0);
  note(*s, "b", 7, 0, 0);
  note(*s, "c", 2, 2, 0);
  EXPECT_EQ(rows(s->top(TopBy::kDenied, 20, 0, false)),
            (std::vector<Row>{{"a", 5, 3}, {"c", 2, 2}}));  // b was never denied: not listed
  EXPECT_EQ(rows(s->top(TopBy::kRequests, 20, 0, false)),
            (std::vector<Row>{{"b", 7, 0}, {"a", 5, 3}, {"c", 2, 2}}));
  EXPECT_EQ(rows(s->top(TopBy::kRequests, 1, 0, false)), (std::vector<Row>{{"b", 7, 0}}));
}

TEST(TopKeys, ANewKeyPastCapacityTakesTheLowestCountsPlaceAndStartsFromIt) {
  auto s = std::make_unique<detail::TopSketch>();
  note(*s, "hot", 10, 0, 0);
  for (std::size_t i = 1; i < TopKeys::kCapacity; ++i) note(*s, "k" + std::to_string(i), 1, 0, 0);
  note(*s, "late", 1, 0, 0);  // 65th key: replaces a key counted 1, so shows 1 + 1
  const auto top = rows(s->top(TopBy::kRequests, 2, 0, false));
  EXPECT_EQ(top, (std::vector<Row>{{"hot", 10, 0}, {"late", 2, 0}}));
  EXPECT_EQ(s->top(TopBy::kRequests, 64, 0, false).size(), TopKeys::kCapacity);
}

TEST(TopKeys, TheWindowSumsTheLastFiveMinutesAndForgetsOlderOnes) {
  auto s = std::make_unique<detail::TopSketch>();
  note(*s, "a", 2, 1, 0);
  note(*s, "a", 3, 3, kMinute + 5);
  EXPECT_EQ(rows(s->top(TopBy::kDenied, 20, 4 * kMinute, false)), (std::vector<Row>{{"a", 5, 4}}));
  // Minute 0 has left the window at minute 5; minute 1 is still in it.
  EXPECT_EQ(rows(s->top(TopBy::kDenied, 20, 5 * kMinute, false)), (std::vector<Row>{{"a", 3, 3}}));
  // Minute 6 reuses minute 1's slot: what it held is gone.
  note(*s, "b", 1, 1, 6 * kMinute);
  EXPECT_EQ(rows(s->top(TopBy::kDenied, 20, 6 * kMinute, false)), (std::vector<Row>{{"b", 1, 1}}));
}

TEST(TopKeys, ALongKeyIsKeptCutTo47BytesAndAHashedOneShowsItsHash) {
  auto s = std::make_unique<detail::TopSketch>();
  const std::string longkey(60, 'x');
  note(*s, longkey, 1, 1, 0);
  EXPECT_EQ(s->top(TopBy::kDenied, 1, 0, false).at(0).key, std::string(47, 'x'));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(table::hash_key(longkey).bucket));
  EXPECT_EQ(s->top(TopBy::kDenied, 1, 0, true).at(0).key, hex);
}

TEST(TopKeys, ARuleMakesItsSketchAtItsFirstDecisionWithinTheBudgetOfSketches) {
  auto budget = std::make_shared<detail::TopBudget>(1);
  auto first = std::make_unique<detail::TopSlot>(budget);
  detail::TopSlot second(budget);
  EXPECT_EQ(first->get(), nullptr);  // never asked: nothing made
  ASSERT_NE(first->take(), nullptr);
  EXPECT_EQ(first->take(), first->get());
  EXPECT_EQ(second.take(), nullptr);  // the budget of 1 is spent
  EXPECT_TRUE(second.refused());
  first.reset();  // its rule dropped: the sketch goes back to the budget
  EXPECT_NE(second.take(), nullptr);
  EXPECT_FALSE(second.refused());
}

TEST(TopKeys, TheGatewayAndTheCheckApiNoteTheirDecisionsInTheRulesTopKeys) {
  Engine e(load_rules("listen: 127.0.0.1:8080\n"
                      "upstreams:\n  app: {servers: [127.0.0.1:8081]}\n"
                      "routes:\n  - {name: all, match: {path_prefix: /}, upstream: app, "
                      "rules: [per-ip]}\n"
                      "rules:\n"
                      "  per-ip: {limit: \"fixed-window:limit=2,window=1h\", key: client_ip}\n"),
           0);
  const std::vector<Header> headers;
  Outcome out;
  for (int i = 0; i < 5; ++i) {
    e.decide(RequestView{"GET", "example.com", "/x", "", "10.0.0.1", headers}, 0, out);
  }
  e.decide(RequestView{"GET", "example.com", "/x", "", "10.0.0.2", headers}, 0, out);
  e.decide(RuleAsk{"per-ip", "10.0.0.2"}, 0, out);  // the decision service: the same key
  const auto denied = e.top_keys("per-ip", TopBy::kDenied, 20, 0);
  ASSERT_TRUE(denied);
  EXPECT_EQ(rows(denied->keys), (std::vector<Row>{{"10.0.0.1", 5, 3}}));
  EXPECT_EQ(rows(e.top_keys("per-ip", TopBy::kRequests, 20, 0)->keys),
            (std::vector<Row>{{"10.0.0.1", 5, 3}, {"10.0.0.2", 2, 0}}));
  EXPECT_FALSE(e.top_keys("nope", TopBy::kDenied, 20, 0));
}

}  // namespace
}  // namespace sluice::engine
