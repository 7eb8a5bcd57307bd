// The Envoy rate limit service through the engine: descriptors matched as envoyproxy/ratelimit
// matches them, OK turning OVER_LIMIT in a window, statuses per descriptor, unlimited, shadow
// mode, hits_addend, overrides, bad input; and reloads that keep unchanged descriptors' state.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"
#include "support/units.hpp"

namespace sluice::engine {
namespace {

using test::units::kSecond;
// A time well inside a minute and an hour window: 2024-01-01T00:00:10Z.
constexpr core::Nanos kT0 = 1'704'067'210 * kSecond;

const char* kDomain = R"(domain: edge
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

config::RuleSet rules_of(const std::string& domain_yaml) {
  config::RlsLoaded loaded = config::load_rls_text(domain_yaml, "rls.yaml");
  EXPECT_TRUE(loaded.errors.empty()) << loaded.errors.front().format();
  config::RuleSet rules;
  rules.rls.emplace();
  rules.rls->domains = std::move(loaded.domains);
  return rules;
}

using Descriptor = std::vector<std::pair<std::string, std::string>>;

// One descriptor's answer, as the gRPC adapter writes it.
struct Status {
  bool over = false;
  bool has_limit = false;
  std::uint32_t requests_per_unit = 0;
  config::RlsUnit unit = config::RlsUnit::kSecond;
  std::string name;
  std::int64_t remaining = 0;  // UINT32_MAX for unlimited
  std::int64_t reset_seconds = 0;
};

struct Answer {
  Verdict verdict = Verdict::kAllow;
  std::string error;
  std::string_view field;
  std::vector<Status> statuses;
  bool over() const { return verdict == Verdict::kDeny; }
};

Answer ask_rls(Engine& e, const std::vector<Descriptor>& descriptors, core::Nanos now,
               std::uint32_t hits = 0, std::string domain = "edge",
               std::vector<std::optional<RlsOverride>> overrides = {}) {
  std::vector<std::vector<RlsEntry>> entries;
  for (const auto& d : descriptors) {
    entries.emplace_back();
    for (const auto& [k, v] : d) entries.back().push_back(RlsEntry{k, v});
  }
  std::vector<RlsDescriptorView> views;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    views.push_back({entries[i], i < overrides.size() ? overrides[i] : std::nullopt});
  }
  Outcome out;
  e.decide(RlsAsk{domain, views, hits}, now, out);
  Answer a;
  a.verdict = out.verdict;
  a.error = out.error;
  a.field = error_field(out.error_kind);
  if (out.verdict == Verdict::kInvalid) return a;
  a.statuses.resize(descriptors.size());
  for (const Applied& ap : out.applied) {
    Status& s = a.statuses[ap.item];
    if (ap.limit.unlimited) {
      s.remaining = std::numeric_limits<std::uint32_t>::max();
      continue;
    }
    s.over = !ap.decision.allowed && ap.enforced;
    s.has_limit = true;
    s.requests_per_unit = ap.limit.rls->requests_per_unit;
    s.unit = ap.limit.rls->unit;
    s.name = ap.limit.rls->name;
    s.remaining = ap.decision.remaining;
    s.reset_seconds = core::ceil_seconds(ap.decision.reset_after);
  }
  return a;
}

TEST(Rls, MatchesAsEnvoyRatelimit) {
  Engine e(rules_of(kDomain), 0);
  auto limit_of = [&](const Descriptor& d) { return ask_rls(e, {d}, kT0).statuses[0]; };
  EXPECT_EQ(limit_of({{"remote_address", "1.2.3.4"}}).requests_per_unit, 3u);      // the key alone
  EXPECT_EQ(limit_of({{"remote_address", "10.0.0.1"}}).requests_per_unit, 1u);     // key+value
  EXPECT_EQ(limit_of({{"remote_address", "192.168.0.7"}}).requests_per_unit, 2u);  // value*
  EXPECT_EQ(limit_of({{"remote_address", "192.169.0.7"}}).requests_per_unit, 3u);
  EXPECT_FALSE(limit_of({{"path", "/health"}}).has_limit);  // unlimited
  EXPECT_EQ(limit_of({{"path", "/health"}}).remaining, std::numeric_limits<std::uint32_t>::max());
  EXPECT_FALSE(limit_of({{"path", "/other"}}).has_limit);  // a leaf without rate_limit
  EXPECT_FALSE(limit_of({{"nothing", "x"}}).has_limit);
  // Nested: the limit applies only at exactly its depth.
  EXPECT_FALSE(limit_of({{"client", "acme"}}).has_limit);
  EXPECT_EQ(limit_of({{"client", "acme"}, {"path", "/x"}}).unit, config::RlsUnit::kHour);
  EXPECT_EQ(limit_of({{"client", "acme"}, {"path", "/y"}, {"method", "POST"}}).unit,
            config::RlsUnit::kSecond);
  EXPECT_FALSE(limit_of({{"client", "acme"}, {"path", "/x"}, {"method", "GET"}}).has_limit);
  EXPECT_FALSE(limit_of({{"client", "other"}, {"path", "/x"}}).has_limit);
  // Deeper than the config: no limit, as envoyproxy/ratelimit.
  EXPECT_FALSE(limit_of({{"remote_address", "1.2.3.4"}, {"path", "/x"}}).has_limit);
}

TEST(Rls, OkTurnsOverLimitAfterRequestsPerUnitInTheWindow) {
  Engine e(rules_of(kDomain), 0);
  for (int i = 0; i < 3; ++i) {
    const Answer a = ask_rls(e, {{{"remote_address", "1.2.3.4"}}}, kT0 + i);
    EXPECT_FALSE(a.over());
    EXPECT_EQ(a.statuses[0].remaining, 2 - i);
    EXPECT_EQ(a.statuses[0].unit, config::RlsUnit::kMinute);
    EXPECT_EQ(a.statuses[0].reset_seconds, 50);  // the minute ends at :00:60
  }
  const Answer over = ask_rls(e, {{{"remote_address", "1.2.3.4"}}}, kT0 + 3);
  EXPECT_TRUE(over.over());
  EXPECT_TRUE(over.statuses[0].over);
  EXPECT_EQ(over.statuses[0].remaining, 0);
  EXPECT_EQ(over.statuses[0].reset_seconds, 50);
  // Another address has its own counter; the next minute starts afresh.
  EXPECT_FALSE(ask_rls(e, {{{"remote_address", "1.2.3.5"}}}, kT0).over());
  EXPECT_FALSE(ask_rls(e, {{{"remote_address", "1.2.3.4"}}}, kT0 + 50 * kSecond).over());
}

TEST(Rls, PerDescriptorStatusesAndAllOrNone) {
  Engine e(rules_of(kDomain), 0);
  ASSERT_FALSE(ask_rls(e, {{{"remote_address", "10.0.0.1"}}}, kT0).over());
  const Answer a = ask_rls(e,
                           {{{"remote_address", "10.0.0.1"}},
                            {{"path", "/health"}},
                            {{"path", "/other"}},
                            {{"remote_address", "1.2.3.4"}}},
                           kT0 + 1);
  EXPECT_TRUE(a.over());
  EXPECT_TRUE(a.statuses[0].over);
  EXPECT_EQ(a.statuses[0].name, "tight");
  EXPECT_FALSE(a.statuses[1].over);
  EXPECT_FALSE(a.statuses[2].has_limit);
  EXPECT_FALSE(a.statuses[3].over);  // within its own limit...
  // ...but the request was refused, so it was charged nothing (all or none).
  EXPECT_EQ(ask_rls(e, {{{"remote_address", "1.2.3.4"}}}, kT0 + 2).statuses[0].remaining, 2);
}

TEST(Rls, NestedDescriptorsHaveTheirOwnCounters) {
  Engine e(rules_of(kDomain), 0);
  const Descriptor post = {{"client", "acme"}, {"path", "/x"}, {"method", "POST"}};
  const Descriptor path = {{"client", "acme"}, {"path", "/x"}};
  EXPECT_FALSE(ask_rls(e, {post}, kT0).over());
  EXPECT_TRUE(ask_rls(e, {post}, kT0 + 1).over());  // 1 per second
  EXPECT_FALSE(ask_rls(e, {post}, kT0 + kSecond).over());
  EXPECT_EQ(ask_rls(e, {path}, kT0).statuses[0].remaining, 1);  // its own (hourly) counter
  const Answer a = ask_rls(e, {path}, kT0 + 1);
  EXPECT_FALSE(a.over());
  EXPECT_EQ(a.statuses[0].reset_seconds, 3600 - 10);
  EXPECT_TRUE(ask_rls(e, {path}, kT0 + 2).over());
}

TEST(Rls, ShadowModeReportsButNeverRefuses) {
  Engine e(rules_of(kDomain), 0);
  EXPECT_EQ(ask_rls(e, {{{"shadow", "x"}}}, kT0).statuses[0].remaining, 0);
  const Answer a = ask_rls(e, {{{"shadow", "x"}}}, kT0 + 1);
  EXPECT_FALSE(a.over());
  EXPECT_FALSE(a.statuses[0].over);
  EXPECT_EQ(a.statuses[0].requests_per_unit, 1u);
  // A shadow limit over its count does not stop an enforced one beside it being charged.
  ask_rls(e, {{{"shadow", "x"}}, {{"remote_address", "7.7.7.7"}}}, kT0 + 2);
  EXPECT_EQ(ask_rls(e, {{{"remote_address", "7.7.7.7"}}}, kT0 + 3).statuses[0].remaining, 1);
}

TEST(Rls, HitsAddendIsTheCost) {
  Engine e(rules_of(kDomain), 0);
  EXPECT_EQ(ask_rls(e, {{{"remote_address", "2.2.2.2"}}}, kT0, 0).statuses[0].remaining,
            2);  // 0: 1
  EXPECT_EQ(ask_rls(e, {{{"remote_address", "2.2.2.2"}}}, kT0, 2).statuses[0].remaining, 0);
  const Answer a = ask_rls(e, {{{"remote_address", "3.3.3.3"}}}, kT0, 4);  // above the limit
  EXPECT_TRUE(a.over());
  EXPECT_EQ(a.statuses[0].remaining, 3);  // a refused request counts nothing
}

TEST(Rls, TheSameLimitTwiceInOneRequestIsTwoHits) {
  Engine e(rules_of(kDomain), 0);
  const Answer a = ask_rls(e,
                           {{{"remote_address", "4.4.4.4"}},
                            {{"remote_address", "4.4.4.4"}},
                            {{"remote_address", "5.5.5.5"}}},
                           kT0);
  EXPECT_FALSE(a.over());
  EXPECT_EQ(a.statuses[0].remaining, 2);
  EXPECT_EQ(a.statuses[1].remaining, 1);  // decided after the first
  EXPECT_EQ(a.statuses[2].remaining, 2);
}

TEST(Rls, EachRoundIsAllOrNoneOverDistinctLimits) {
  // Rounds: {tight#1, 8.8.8.8#1}, then {tight#2, 8.8.8.8#2}; the second round is refused by
  // `tight` (1 a minute), so the address is charged once, not twice.
  Engine e(rules_of(kDomain), 0);
  const Answer a = ask_rls(e,
                           {{{"remote_address", "10.0.0.1"}},
                            {{"remote_address", "8.8.8.8"}},
                            {{"remote_address", "10.0.0.1"}},
                            {{"remote_address", "8.8.8.8"}}},
                           kT0);
  EXPECT_TRUE(a.over());
  EXPECT_FALSE(a.statuses[0].over);
  EXPECT_EQ(a.statuses[1].remaining, 2);
  EXPECT_TRUE(a.statuses[2].over);
  EXPECT_FALSE(a.statuses[3].over);  // its own decision: it would fit...
  EXPECT_EQ(a.statuses[3].remaining, 1);
  // ...but its round was refused, so only the first round counted.
  EXPECT_EQ(ask_rls(e, {{{"remote_address", "8.8.8.8"}}}, kT0 + 1).statuses[0].remaining, 1);
}

TEST(Rls, ManyDescriptorsOverOneLimitAreDecidedOneAfterAnother) {
  // 40,000 descriptors over `remote_address` (3 a minute), 10,000 addresses four times each:
  // descriptor i is the (i / 10,000 + 1)-th hit of address i % 10,000, so the first three
  // pass with 2, 1, 0 left and the fourth is over. As one descriptor at a time would decide.
  config::RuleSet rules = rules_of(kDomain);
  rules.rls->max_descriptors = 40000;
  Engine e(std::move(rules), 0);
  std::vector<Descriptor> many;
  for (int i = 0; i < 40000; ++i) many.push_back({{"remote_address", std::to_string(i % 10000)}});
  const Answer a = ask_rls(e, many, kT0);
  EXPECT_TRUE(a.over());
  ASSERT_EQ(a.statuses.size(), 40000u);
  int wrong = 0;
  for (int i = 0; i < 40000; ++i) {
    const Status& s = a.statuses[static_cast<std::size_t>(i)];
    const int hit = i / 10000;  // 0..3
    const bool right = hit < 3 ? !s.over && s.remaining == 2 - hit : s.over && s.remaining == 0;
    if (!right && ++wrong <= 3) ADD_FAILURE() << "descriptor " << i << ": " << s.remaining;
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_TRUE(ask_rls(e, {{{"remote_address", "9999"}}}, kT0 + 1).over());
}

TEST(Rls, ARequestOverMaxDescriptorsIsRefusedChargingNothing) {
  config::RuleSet rules = rules_of(kDomain);
  EXPECT_EQ(rules.rls->max_descriptors, 10000);  // the default
  rules.rls->max_descriptors = 3;
  Engine e(std::move(rules), 0);
  const std::vector<Descriptor> four(4, {{"remote_address", "9.9.9.9"}});
  const Answer a = ask_rls(e, four, kT0);
  EXPECT_EQ(a.verdict, Verdict::kInvalid);
  EXPECT_EQ(a.error, "4 descriptors in one request, more than rls.max_descriptors (3)");
  EXPECT_EQ(a.field, "max_descriptors");
  EXPECT_EQ(ask_rls(e, {{{"remote_address", "9.9.9.9"}}}, kT0).statuses[0].remaining, 2);
  // Three are answered (the fourth hit of 9.9.9.9 is over); a reload moves the cap.
  const Answer three = ask_rls(e, {four.begin(), four.end() - 1}, kT0);
  EXPECT_EQ(three.verdict, Verdict::kDeny);
  EXPECT_EQ(three.statuses[1].remaining, 0);
  EXPECT_TRUE(three.statuses[2].over);
  config::RuleSet raised = rules_of(kDomain);
  raised.rls->max_descriptors = 4;
  ASSERT_TRUE(e.apply(std::move(raised), kT0).empty());
  const Answer b = ask_rls(e, std::vector<Descriptor>(4, {{"remote_address", "7.7.7.2"}}), kT0);
  EXPECT_EQ(b.verdict, Verdict::kDeny);
  EXPECT_EQ(b.statuses[2].remaining, 0);
  EXPECT_TRUE(b.statuses[3].over);
}

TEST(Rls, AnAlgorithmOtherThanTheWindow) {
  Engine e(rules_of(kDomain), 0);
  EXPECT_FALSE(ask_rls(e, {{{"smooth", "a"}}}, kT0).over());
  EXPECT_FALSE(ask_rls(e, {{{"smooth", "a"}}}, kT0).over());
  EXPECT_TRUE(ask_rls(e, {{{"smooth", "a"}}}, kT0).over());
  // GCRA: one request back after an emission interval (500ms), not at the next second.
  EXPECT_FALSE(ask_rls(e, {{{"smooth", "a"}}}, kT0 + kSecond / 2).over());
}

TEST(Rls, AnUnknownDomainIsOkWithoutLimits) {
  Engine e(rules_of(kDomain), 0);
  const Answer a = ask_rls(e, {{{"remote_address", "1.2.3.4"}}, {{"x", "y"}}}, kT0, 0, "nope");
  EXPECT_EQ(a.verdict, Verdict::kAllow);
  ASSERT_EQ(a.statuses.size(), 2u);
  for (const auto& s : a.statuses) EXPECT_FALSE(s.has_limit);
}

TEST(Rls, BadRequestsNameWhatIsWrong) {
  Engine e(rules_of(kDomain), 0);
  EXPECT_EQ(ask_rls(e, {{{"remote_address", "1.2.3.4"}}}, kT0, 0, "").error,
            "rate limit domain must not be empty");
  EXPECT_EQ(ask_rls(e, {}, kT0).error, "rate limit descriptor list must not be empty");
  // Empty keys and values match nothing and crash nothing.
  const Answer a = ask_rls(e, {{{"", ""}}, {}}, kT0);
  EXPECT_EQ(a.verdict, Verdict::kAllow);
  EXPECT_EQ(a.statuses.size(), 2u);
}

TEST(Rls, AClientOverrideReplacesTheConfiguredLimit) {
  Engine e(rules_of(kDomain), 0);
  const std::vector<Descriptor> d = {{{"anything", "x"}}};
  Answer a =
      ask_rls(e, d, kT0, 0, "edge", {RlsOverride{1, static_cast<int>(config::RlsUnit::kHour)}});
  EXPECT_FALSE(a.over());
  EXPECT_EQ(a.statuses[0].unit, config::RlsUnit::kHour);
  EXPECT_TRUE(ask_rls(e, d, kT0 + 1, 0, "edge", {RlsOverride{1, 3}}).over());
  a = ask_rls(e, d, kT0, 0, "edge", {RlsOverride{1, 9}});
  EXPECT_NE(a.error.find("limit override unit 9"), std::string::npos);
  // Overrides make tables; the number of distinct ones is capped.
  std::string exhausted;
  for (std::uint32_t n = 1; n <= Engine::kMaxRlsOverrides + 1 && exhausted.empty(); ++n) {
    const Answer x = ask_rls(e, d, kT0, 0, "edge", {RlsOverride{1000 + n, 1}});
    if (x.field == "exhausted") exhausted = x.error;
  }
  EXPECT_NE(exhausted.find("distinct limit overrides"), std::string::npos);
}

TEST(Rls, AnOverrideKeptInRedisTakesTheRlsFailurePolicyAsConfiguredLimitsDo) {
  // Redis cannot be asked here (Engine::decide answers by failure policy): redis.on_failure is
  // open, rls.on_failure closed. docs/envoy-rls.md: RLS limits take rls.on_failure first; an
  // override kept in Redis used to take redis.on_failure and be let through.
  config::RuleSet rules = rules_of(kDomain);
  rules.redis.emplace();
  rules.redis->url = "redis://127.0.0.1:1";
  rules.redis->defaults.on_failure = config::FailurePolicy::kOpen;
  rules.rls->storage = config::Storage::kRedis;
  rules.rls->on_failure = config::FailurePolicy::kClosed;
  Engine e(rules, 0);
  EXPECT_TRUE(ask_rls(e, {{{"remote_address", "10.9.9.9"}}}, kT0).over()) << "configured limit";
  EXPECT_TRUE(ask_rls(e, {{{"anything", "x"}}}, kT0, 0, "edge", {RlsOverride{100, 1}}).over())
      << "override";
  rules.rls->on_failure.reset();  // now redis.on_failure (open) for both
  ASSERT_TRUE(e.apply(rules, 0).empty());
  EXPECT_FALSE(ask_rls(e, {{{"remote_address", "10.9.9.9"}}}, kT0).over());
}

TEST(Rls, KeysAreUnambiguous) {
  // k=a_b and k_a=b are two descriptors, two counters (envoyproxy/ratelimit's joined keys
  // would collide).
  Engine e(rules_of("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, "
                    "requests_per_unit: 1}\n  - key: k_a\n    rate_limit: {unit: hour, "
                    "requests_per_unit: 1}\n"),
           0);
  EXPECT_FALSE(ask_rls(e, {{{"k", "a_b"}}}, kT0, 0, "d").over());
  EXPECT_FALSE(ask_rls(e, {{{"k_a", "b"}}}, kT0, 0, "d").over());
}

TEST(Rls, AReloadKeepsTheCountOfUnchangedDescriptorsAndRetunesChangedOnes) {
  Engine e(rules_of(kDomain), 0);
  for (int i = 0; i < 3; ++i) ask_rls(e, {{{"remote_address", "6.6.6.6"}}}, kT0);
  EXPECT_TRUE(ask_rls(e, {{{"remote_address", "6.6.6.6"}}}, kT0).over());
  EXPECT_TRUE(e.apply(rules_of(kDomain), kT0).empty());
  EXPECT_TRUE(ask_rls(e, {{{"remote_address", "6.6.6.6"}}}, kT0).over()) << "state kept";
  std::string raised = kDomain;
  raised.replace(raised.find("requests_per_unit: 3"), 20, "requests_per_unit: 5");
  EXPECT_TRUE(e.apply(rules_of(raised), kT0).empty());
  const Answer a = ask_rls(e, {{{"remote_address", "6.6.6.6"}}}, kT0);
  EXPECT_FALSE(a.over()) << "3 counted, 5 allowed now";
  EXPECT_EQ(a.statuses[0].remaining, 1);
}

}  // namespace
}  // namespace sluice::engine
