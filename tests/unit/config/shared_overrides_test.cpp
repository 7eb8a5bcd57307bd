// The shared overrides of rules kept in Redis (sluice/config/shared_overrides.hpp): how Redis's
// hash reads back, which rules take them, and how they stand beside a rule's file overrides.
#include "sluice/config/shared_overrides.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sluice/config/loader.hpp"

namespace sluice::config {
namespace {

const char* kConfig = R"(redis:
  url: redis://127.0.0.1:6379
rules:
  shared:
    limit: gcra:rate=1/m,burst=1
    key: header:X-User
    storage: redis
    overrides:
      customer-42: gcra:rate=1/m,burst=6
  mine:
    limit: gcra:rate=1/m,burst=1
    key: header:X-User
    storage: local
)";

RuleSet rules() {
  Loaded loaded = load_config_text(kConfig, "test.yaml");
  EXPECT_TRUE(loaded.errors.empty()) << loaded.errors.front().format();
  return *loaded.rules;
}

std::vector<std::string> keys(const std::vector<LimitVariant>& list) {
  std::vector<std::string> out;
  for (const auto& v : list) out.push_back(v.name + "=" + v.limit_text);
  return out;
}

TEST(SharedOverrides, AFieldIsTheRuleAndTheKeySplitAtTheFirstSlash) {
  const SharedOverrides read = read_shared_overrides(
      {{"shared/b/c", "gcra:rate=1/m,burst=3"}, {"shared/a", "gcra:rate=1/m,burst=2"}});
  EXPECT_TRUE(read.problems.empty());
  ASSERT_EQ(read.by_rule.size(), 1U);
  // Sorted by key, whatever order HGETALL gave.
  EXPECT_EQ(keys(read.by_rule.at("shared")),
            (std::vector<std::string>{"a=gcra:rate=1/m,burst=2", "b/c=gcra:rate=1/m,burst=3"}));
}

TEST(SharedOverrides, AnEntryThatIsNotRuleSlashKeyToALimitIsLeftOutAndSaid) {
  const SharedOverrides read = read_shared_overrides(
      {{"noslash", "gcra:rate=1/m"}, {"shared/", "gcra:rate=1/m"}, {"shared/x", "fast"}});
  EXPECT_TRUE(read.by_rule.empty());
  ASSERT_EQ(read.problems.size(), 3U);
  EXPECT_NE(read.problems[0].find("'noslash' is not RULE/KEY"), std::string::npos);
  EXPECT_NE(read.problems[2].find("'shared/x'"), std::string::npos);
}

TEST(SharedOverrides, OnlyRulesKeptInRedisTakeThemAndOnlyOfTheirAlgorithm) {
  RuleSet set = rules();
  const SharedOverrides read =
      read_shared_overrides({{"shared/c-9", "gcra:rate=1/m,burst=9"},
                             {"shared/tb", "token-bucket:rate=1/s,burst=5"},
                             {"mine/c-9", "gcra:rate=1/m,burst=9"}});
  std::vector<std::string> problems;
  EXPECT_FALSE(has_shared_overrides(set, read));
  EXPECT_TRUE(set_shared_overrides(set, read, problems));
  EXPECT_EQ(keys(set.rule("shared")->shared_overrides),
            (std::vector<std::string>{"c-9=gcra:rate=1/m,burst=9"}));
  EXPECT_TRUE(set.rule("mine")->shared_overrides.empty());
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_NE(problems[0].find("'tb' is token-bucket but the rule is gcra"), std::string::npos);
  // Set again: nothing to change.
  EXPECT_TRUE(has_shared_overrides(set, read));
  EXPECT_FALSE(set_shared_overrides(set, read, problems));
}

TEST(SharedOverrides, ASharedOverrideStandsOverTheFileOneOfItsKey) {
  RuleSet set = rules();
  std::vector<std::string> problems;
  set_shared_overrides(set,
                       read_shared_overrides({{"shared/customer-42", "gcra:rate=1/m,burst=2"},
                                              {"shared/c-9", "gcra:rate=1/m,burst=9"}}),
                       problems);
  EXPECT_EQ(
      keys(overrides_in_force(*set.rule("shared"))),
      (std::vector<std::string>{"c-9=gcra:rate=1/m,burst=9", "customer-42=gcra:rate=1/m,burst=2"}));
  EXPECT_EQ(keys(set.rule("shared")->overrides),
            (std::vector<std::string>{"customer-42=gcra:rate=1/m,burst=6"}))
      << "the file's is kept, in force again once the shared one goes";
}

TEST(SharedOverrides, AWriteFromHereKeepsTheListSortedAndADeleteEmptiesIt) {
  SharedOverrides shared = read_shared_overrides({{"shared/b", "gcra:rate=1/m,burst=2"}});
  const auto variant = [](const std::string& key) {
    return read_shared_overrides({{"shared/" + key, "gcra:rate=1/m,burst=5"}})
        .by_rule.at("shared")
        .front();
  };
  put_shared_override(shared, "shared", "a", variant("a"));
  put_shared_override(shared, "shared", "c", variant("c"));
  EXPECT_EQ(keys(shared.by_rule.at("shared")),
            (std::vector<std::string>{"a=gcra:rate=1/m,burst=5", "b=gcra:rate=1/m,burst=2",
                                      "c=gcra:rate=1/m,burst=5"}));
  for (const char* key : {"a", "b", "c"}) put_shared_override(shared, "shared", key, std::nullopt);
  EXPECT_TRUE(shared.by_rule.empty());
}

TEST(SharedOverrides, AReloadKeepsThemOnRulesStillKeptInRedis) {
  RuleSet before = rules();
  std::vector<std::string> problems;
  set_shared_overrides(before, read_shared_overrides({{"shared/c-9", "gcra:rate=1/m,burst=9"}}),
                       problems);
  RuleSet reloaded = rules();
  keep_shared_overrides(before, reloaded);
  EXPECT_EQ(reloaded.rule("shared")->shared_overrides, before.rule("shared")->shared_overrides);
}

}  // namespace
}  // namespace sluice::config
