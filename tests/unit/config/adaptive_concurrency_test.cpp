// A route's adaptive_concurrency block: read with its defaults, written back the same, and each
// wrong value or combination an error at its line that names the field.
#include <gtest/gtest.h>

#include <string>

#include "config/config_errors.hpp"
#include "sluice/config/loader.hpp"

namespace sluice::config {
namespace {

using test::errors_of;

std::string adaptive_route(const std::string& block, const std::string& top = "") {
  return top + "upstreams:\n  app: {servers: [127.0.0.1:9]}\nroutes:\n  - name: api\n" +
         "    upstream: app\n    adaptive_concurrency:\n" + block;
}

TEST(AdaptiveConcurrencyConfig, DefaultsAreEnvoysGradientRefusingAtOnceWith503) {
  Loaded loaded = load_config_text(adaptive_route("      {}\n"), "t.yaml");
  ASSERT_TRUE(loaded.rules) << errors_of(loaded);
  const AdaptiveConcurrency& a = *loaded.rules->routes[0].adaptive;
  EXPECT_EQ(a.algorithm, AdaptiveAlgorithm::kEnvoyGradient);
  EXPECT_FALSE(a.min_limit);
  EXPECT_EQ(a.max_wait, 0);
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.priority, 0);
  EXPECT_TRUE(a.priority_header.empty());
}

TEST(AdaptiveConcurrencyConfig, EveryFieldIsWrittenBackAsRead) {
  Loaded loaded = load_config_text(
      adaptive_route(
          "      algorithm: gradient2\n      min_limit: 4\n      max_limit: 64\n"
          "      initial: 8\n      max_wait: 50ms\n      max_queue: 20\n      status: 429\n"
          "      body: \"busy\\n\"\n      priority: header:X-Priority\n"
          "      bypass: [10.0.0.0/8]\n",
          "trusted_proxies: [127.0.0.1]\n"),
      "t.yaml");
  ASSERT_TRUE(loaded.rules) << errors_of(loaded);
  const std::string yaml = to_yaml(*loaded.rules);
  Loaded again = load_config_text(yaml, "written.yaml");
  ASSERT_TRUE(again.rules) << errors_of(again) << yaml;
  const AdaptiveConcurrency& a = *again.rules->routes[0].adaptive;
  EXPECT_EQ(a, *loaded.rules->routes[0].adaptive);
  EXPECT_EQ(a.algorithm, AdaptiveAlgorithm::kGradient2);
  EXPECT_EQ(a.max_wait, 50 * core::kNanosPerMilli);
  EXPECT_EQ(a.priority_header, "X-Priority");
  EXPECT_EQ(a.bypass.size(), 1u);
}

TEST(AdaptiveConcurrencyConfig, AnEnvoyGradientMinRttIntervalIsWrittenBackAsRead) {
  Loaded loaded = load_config_text(adaptive_route("      min_rtt_interval: 3s\n", ""), "t.yaml");
  ASSERT_TRUE(loaded.rules) << errors_of(loaded);
  EXPECT_EQ(loaded.rules->routes[0].adaptive->min_rtt_interval, 3 * core::kNanosPerSecond);
  Loaded again = load_config_text(to_yaml(*loaded.rules), "written.yaml");
  ASSERT_TRUE(again.rules) << errors_of(again);
  EXPECT_EQ(again.rules->routes[0].adaptive->min_rtt_interval, 3 * core::kNanosPerSecond);
}

TEST(AdaptiveConcurrencyConfig, EachWrongValueIsAnErrorNamingItsField) {
  // The block starts at line 7; each error is at the line of the field it names.
  const struct {
    std::string block, want;
    int line = 7;
  } cases[] = {
      {"      algorithm: bbr\n",
       "'adaptive_concurrency.algorithm': unknown value 'bbr' (accepted: "
       "envoy-gradient, vegas, gradient2, aimd)"},
      {"      initial: 5\n", "envoy-gradient has no initial limit"},
      {"      algorithm: vegas\n      min_limit: 2\n", "vegas has no min_limit", 8},
      {"      algorithm: aimd\n      min_rtt_interval: 3s\n", "applies to envoy-gradient only", 8},
      {"      min_rtt_interval: 500us\n", "500us is below 1ms"},
      {"      algorithm: aimd\n      min_limit: 9\n      max_limit: 3\n", "9 is above max_limit 3",
       8},
      {"      priority: 10\n", "'10' is not a tier (0 to 9"},
      {"      priority: header:X-Priority\n", "is read only from trusted_proxies, and none is set"},
      {"      min_limit: 0\n", "0 is out of range (accepted: 1 to 1000000)"},
      {"      bypass: [10.0.0.1/8]\n", "did you mean 10.0.0.0/8"},
  };
  for (const auto& [block, want, line] : cases) {
    Loaded loaded = load_config_text(adaptive_route(block), "t.yaml");
    const std::string all = errors_of(loaded);
    EXPECT_NE(all.find(want), std::string::npos) << block << "want: " << want << "\ngot:\n" << all;
    EXPECT_NE(all.find("t.yaml:" + std::to_string(line) + ":"), std::string::npos) << all;
    EXPECT_FALSE(loaded.rules);
  }
}

TEST(AdaptiveConcurrencyConfig, ARouteThatAnswersItselfTakesNone) {
  Loaded loaded = load_config_text(
      "routes:\n  - name: h\n    respond: {status: 200}\n    adaptive_concurrency: {}\n", "t.yaml");
  EXPECT_NE(errors_of(loaded).find("this one answers itself: remove it"), std::string::npos)
      << errors_of(loaded);
}

}  // namespace
}  // namespace sluice::config
