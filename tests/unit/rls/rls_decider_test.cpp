// Descriptor matching as envoyproxy/ratelimit matches, and the answers: OK turning OVER_LIMIT in
// a window, statuses per descriptor, unlimited, shadow mode, hits_addend, overrides, bad input.
#include "rls_decider.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "sluice/server/rls_config.hpp"

namespace sluice::server::rls {
namespace {

constexpr core::Nanos kSecond = core::kNanosPerSecond;
// A time well inside a minute and an hour window: 2024-01-01T00:00:10Z.
constexpr core::Nanos kT0 = 1'704'067'210 * kSecond;

RlsConfig config_of(const std::string& yaml) {
  RlsLoaded loaded = load_rls_config_text(yaml, "rls.yaml");
  if (!loaded.config) {
    ADD_FAILURE() << loaded.errors.front().format();
    return {};
  }
  return *loaded.config;
}

const char* kConfig = R"(domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: remote_address
    value: 10.0.0.1
    rate_limit: {unit: minute, requests_per_unit: 1, name: tight}
  - key: remote_address
    value: "192.168.*"
    rate_limit: {unit: minute, requests_per_unit: 2}
  - key: path
    value: /health
    rate_limit: {unlimited: true}
  - key: path
  - key: client
    value: acme
    descriptors:
      - key: path
        rate_limit: {unit: hour, requests_per_unit: 2}
        descriptors:
          - key: method
            value: POST
            rate_limit: {unit: second, requests_per_unit: 1}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: smooth
    rate_limit: {unit: second, requests_per_unit: 2, algorithm: gcra}
)";

using Descriptor = std::vector<std::pair<std::string, std::string>>;

// Holds the strings the views point into.
struct Call {
  std::string domain = "edge";
  std::vector<Descriptor> descriptors;
  std::uint32_t hits = 0;
  std::vector<std::optional<Override>> overrides;

  Answer run(Decider& decider, core::Nanos now) const {
    std::vector<DescriptorView> views;
    for (std::size_t i = 0; i < descriptors.size(); ++i) {
      DescriptorView v;
      for (const auto& [k, val] : descriptors[i]) v.entries.push_back(Entry{k, val});
      if (i < overrides.size()) v.limit = overrides[i];
      views.push_back(std::move(v));
    }
    return decider.decide(Request{domain, views, hits}, now);
  }
};

Answer ask(Decider& d, std::vector<Descriptor> descriptors, core::Nanos now,
           std::uint32_t hits = 0) {
  Call c;
  c.descriptors = std::move(descriptors);
  c.hits = hits;
  return c.run(d, now);
}

const Limit* match(const DescriptorTree& tree, const Descriptor& d) {
  std::vector<Entry> entries;
  for (const auto& [k, v] : d) entries.push_back(Entry{k, v});
  return tree.match(entries);
}

TEST(DescriptorTree, MatchesAsEnvoyRatelimit) {
  const RlsConfig config = config_of(kConfig);
  auto built = DescriptorTree::build(config.domains.at(0), 1u << 20);
  ASSERT_TRUE(built) << built.error();
  const DescriptorTree& tree = *built;

  const Limit* any_ip = match(tree, {{"remote_address", "1.2.3.4"}});
  const Limit* exact_ip = match(tree, {{"remote_address", "10.0.0.1"}});
  const Limit* prefix_ip = match(tree, {{"remote_address", "192.168.0.7"}});
  ASSERT_NE(any_ip, nullptr);
  ASSERT_NE(exact_ip, nullptr);
  ASSERT_NE(prefix_ip, nullptr);
  EXPECT_EQ(any_ip->config.requests_per_unit, 3u);     // the key alone
  EXPECT_EQ(exact_ip->config.requests_per_unit, 1u);   // key+value beats the key alone
  EXPECT_EQ(prefix_ip->config.requests_per_unit, 2u);  // a value* prefix beats the key alone
  EXPECT_EQ(match(tree, {{"remote_address", "192.169.0.7"}}), any_ip);

  EXPECT_TRUE(match(tree, {{"path", "/health"}})->config.unlimited);
  EXPECT_EQ(match(tree, {{"path", "/other"}}), nullptr);  // a leaf without rate_limit
  EXPECT_EQ(match(tree, {{"nothing", "x"}}), nullptr);
  EXPECT_EQ(match(tree, {}), nullptr);

  // Nested: the limit applies only at exactly its depth.
  EXPECT_EQ(match(tree, {{"client", "acme"}}), nullptr);  // level without a rate_limit
  EXPECT_EQ(match(tree, {{"client", "acme"}, {"path", "/x"}})->config.unit, RlsUnit::kHour);
  EXPECT_EQ(match(tree, {{"client", "acme"}, {"path", "/x"}, {"method", "POST"}})->config.unit,
            RlsUnit::kSecond);
  EXPECT_EQ(match(tree, {{"client", "acme"}, {"path", "/x"}, {"method", "GET"}}), nullptr);
  EXPECT_EQ(match(tree, {{"client", "other"}, {"path", "/x"}}), nullptr);
  // Deeper than the config: no limit, as envoyproxy/ratelimit.
  EXPECT_EQ(match(tree, {{"remote_address", "1.2.3.4"}, {"path", "/x"}}), nullptr);
}

TEST(Decider, OkTurnsOverLimitAfterRequestsPerUnitInTheWindow) {
  Decider d(config_of(kConfig));
  for (int i = 0; i < 3; ++i) {
    const Answer a = ask(d, {{{"remote_address", "1.2.3.4"}}}, kT0 + i);
    ASSERT_TRUE(a.invalid.empty());
    EXPECT_EQ(a.overall, Code::kOk);
    ASSERT_EQ(a.statuses.size(), 1u);
    EXPECT_EQ(a.statuses[0].code, Code::kOk);
    EXPECT_EQ(a.statuses[0].remaining, static_cast<std::uint32_t>(2 - i));
    ASSERT_TRUE(a.statuses[0].limit.has_value());
    EXPECT_EQ(a.statuses[0].limit->requests_per_unit, 3u);
    EXPECT_EQ(a.statuses[0].limit->unit, RlsUnit::kMinute);
    EXPECT_EQ(a.statuses[0].reset_seconds, 50);  // the minute ends at :00:60
  }
  const Answer over = ask(d, {{{"remote_address", "1.2.3.4"}}}, kT0 + 3);
  EXPECT_EQ(over.overall, Code::kOverLimit);
  EXPECT_EQ(over.statuses[0].code, Code::kOverLimit);
  EXPECT_EQ(over.statuses[0].remaining, 0u);
  EXPECT_EQ(over.statuses[0].reset_seconds, 50);
  // Another address has its own counter; the next minute starts afresh.
  EXPECT_EQ(ask(d, {{{"remote_address", "1.2.3.5"}}}, kT0).overall, Code::kOk);
  EXPECT_EQ(ask(d, {{{"remote_address", "1.2.3.4"}}}, kT0 + 50 * kSecond).overall, Code::kOk);
}

TEST(Decider, PerDescriptorStatusesAndOverallCode) {
  Decider d(config_of(kConfig));
  ASSERT_EQ(ask(d, {{{"remote_address", "10.0.0.1"}}}, kT0).overall, Code::kOk);
  const Answer a = ask(d,
                       {{{"remote_address", "10.0.0.1"}},
                        {{"path", "/health"}},
                        {{"path", "/other"}},
                        {{"remote_address", "1.2.3.4"}}},
                       kT0 + 1);
  EXPECT_EQ(a.overall, Code::kOverLimit);
  ASSERT_EQ(a.statuses.size(), 4u);
  EXPECT_EQ(a.statuses[0].code, Code::kOverLimit);
  EXPECT_EQ(a.statuses[0].limit->name, "tight");
  EXPECT_EQ(a.statuses[1].code, Code::kOk);  // unlimited
  EXPECT_EQ(a.statuses[1].remaining, std::numeric_limits<std::uint32_t>::max());
  EXPECT_FALSE(a.statuses[1].limit.has_value());
  EXPECT_EQ(a.statuses[2].code, Code::kOk);  // no limit
  EXPECT_FALSE(a.statuses[2].limit.has_value());
  EXPECT_EQ(a.statuses[2].remaining, 0u);
  EXPECT_EQ(a.statuses[3].code, Code::kOk);  // within its own limit...
  // ...but the request was refused, so it was charged nothing (all or none).
  EXPECT_EQ(ask(d, {{{"remote_address", "1.2.3.4"}}}, kT0 + 2).statuses[0].remaining, 2u);
}

TEST(Decider, NestedDescriptors) {
  Decider d(config_of(kConfig));
  const Descriptor post = {{"client", "acme"}, {"path", "/x"}, {"method", "POST"}};
  const Descriptor path = {{"client", "acme"}, {"path", "/x"}};
  EXPECT_EQ(ask(d, {post}, kT0).overall, Code::kOk);
  EXPECT_EQ(ask(d, {post}, kT0 + 1).overall, Code::kOverLimit);  // 1 per second
  EXPECT_EQ(ask(d, {post}, kT0 + kSecond).overall, Code::kOk);
  EXPECT_EQ(ask(d, {path}, kT0).statuses[0].remaining, 1u);  // its own (hourly) counter
  const Answer a = ask(d, {path}, kT0 + 1);
  EXPECT_EQ(a.overall, Code::kOk);
  EXPECT_EQ(a.statuses[0].reset_seconds, 3600 - 10);
  EXPECT_EQ(ask(d, {path}, kT0 + 2).overall, Code::kOverLimit);
}

TEST(Decider, ShadowModeReportsButNeverRefuses) {
  Decider d(config_of(kConfig));
  EXPECT_EQ(ask(d, {{{"shadow", "x"}}}, kT0).statuses[0].remaining, 0u);
  const Answer a = ask(d, {{{"shadow", "x"}}}, kT0 + 1);
  EXPECT_EQ(a.overall, Code::kOk);
  EXPECT_EQ(a.statuses[0].code, Code::kOk);
  EXPECT_EQ(a.statuses[0].remaining, 0u);
  ASSERT_TRUE(a.statuses[0].limit.has_value());
  EXPECT_EQ(a.statuses[0].limit->requests_per_unit, 1u);
  // A shadow limit over its count does not stop an enforced one beside it being charged.
  ask(d, {{{"shadow", "x"}}, {{"remote_address", "7.7.7.7"}}}, kT0 + 2);
  EXPECT_EQ(ask(d, {{{"remote_address", "7.7.7.7"}}}, kT0 + 3).statuses[0].remaining, 1u);
}

TEST(Decider, HitsAddendIsTheCost) {
  Decider d(config_of(kConfig));
  EXPECT_EQ(ask(d, {{{"remote_address", "2.2.2.2"}}}, kT0, 0).statuses[0].remaining, 2u);  // 0 -> 1
  EXPECT_EQ(ask(d, {{{"remote_address", "2.2.2.2"}}}, kT0, 2).statuses[0].remaining, 0u);
  const Answer a = ask(d, {{{"remote_address", "3.3.3.3"}}}, kT0, 4);  // above the limit
  EXPECT_EQ(a.overall, Code::kOverLimit);
  EXPECT_EQ(a.statuses[0].remaining, 3u);  // a refused request counts nothing
}

TEST(Decider, SameLimitTwiceInOneRequest) {
  Decider d(config_of(kConfig));
  const Answer a = ask(d,
                       {{{"remote_address", "4.4.4.4"}},
                        {{"remote_address", "4.4.4.4"}},
                        {{"remote_address", "5.5.5.5"}}},
                       kT0);
  EXPECT_EQ(a.overall, Code::kOk);
  EXPECT_EQ(a.statuses[0].remaining, 2u);
  EXPECT_EQ(a.statuses[1].remaining, 1u);  // decided after the first, as two hits
  EXPECT_EQ(a.statuses[2].remaining, 2u);
}

TEST(Decider, AlgorithmExtension) {
  Decider d(config_of(kConfig));
  EXPECT_EQ(ask(d, {{{"smooth", "a"}}}, kT0).overall, Code::kOk);
  EXPECT_EQ(ask(d, {{{"smooth", "a"}}}, kT0).overall, Code::kOk);
  EXPECT_EQ(ask(d, {{{"smooth", "a"}}}, kT0).overall, Code::kOverLimit);
  // GCRA: one request back after an emission interval (500ms), not at the next second.
  EXPECT_EQ(ask(d, {{{"smooth", "a"}}}, kT0 + kSecond / 2).overall, Code::kOk);
}

TEST(Decider, UnknownDomainIsOkWithoutLimits) {
  Decider d(config_of(kConfig));
  Call c;
  c.domain = "nope";
  c.descriptors = {{{"remote_address", "1.2.3.4"}}, {{"x", "y"}}};
  const Answer a = c.run(d, kT0);
  EXPECT_TRUE(a.invalid.empty());
  EXPECT_EQ(a.overall, Code::kOk);
  ASSERT_EQ(a.statuses.size(), 2u);
  for (const auto& s : a.statuses) {
    EXPECT_EQ(s.code, Code::kOk);
    EXPECT_FALSE(s.limit.has_value());
  }
}

TEST(Decider, BadRequests) {
  Decider d(config_of(kConfig));
  Call c;
  c.domain = "";
  c.descriptors = {{{"remote_address", "1.2.3.4"}}};
  EXPECT_EQ(c.run(d, kT0).invalid, "rate limit domain must not be empty");
  c.domain = "edge";
  c.descriptors.clear();
  EXPECT_EQ(c.run(d, kT0).invalid, "rate limit descriptor list must not be empty");
  // Empty keys and values match nothing and crash nothing.
  c.descriptors = {{{"", ""}}, {}};
  const Answer a = c.run(d, kT0);
  EXPECT_EQ(a.overall, Code::kOk);
  EXPECT_EQ(a.statuses.size(), 2u);
}

TEST(Decider, ClientOverride) {
  Decider d(config_of(kConfig));
  Call c;
  c.descriptors = {{{"anything", "x"}}};
  c.overrides = {Override{1, static_cast<int>(RlsUnit::kHour)}};
  Answer a = c.run(d, kT0);
  EXPECT_EQ(a.overall, Code::kOk);
  ASSERT_TRUE(a.statuses[0].limit.has_value());
  EXPECT_EQ(a.statuses[0].limit->unit, RlsUnit::kHour);
  EXPECT_EQ(c.run(d, kT0 + 1).overall, Code::kOverLimit);
  c.overrides = {Override{1, 9}};
  a = c.run(d, kT0);
  EXPECT_NE(a.invalid.find("limit override unit 9"), std::string::npos);
  // Overrides make tables; the number of distinct ones is capped.
  std::string exhausted;
  for (std::uint32_t n = 1; n <= Decider::kMaxOverrides + 1 && exhausted.empty(); ++n) {
    c.overrides = {Override{1000 + n, 1}};
    exhausted = c.run(d, kT0).exhausted;
  }
  EXPECT_NE(exhausted.find("distinct limit overrides"), std::string::npos);
}

TEST(Decider, KeysAreUnambiguous) {
  const std::vector<Entry> a = {{"k", "a_b"}};
  const std::vector<Entry> b = {{"k_a", "b"}};
  EXPECT_NE(limit_key("d", a), limit_key("d", b));
  EXPECT_NE(limit_key("d1", a), limit_key("d", std::vector<Entry>{{"1k", "a_b"}}));
}

}  // namespace
}  // namespace sluice::server::rls
