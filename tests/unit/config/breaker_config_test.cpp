// A route's `breaker:` and `stale_cache:`: each field read, the documented defaults, the errors
// that name their field and line, and write-back that loads to an equal config.
#include <gtest/gtest.h>

#include <string>

#include "config/config_errors.hpp"
#include "sluice/config/loader.hpp"

namespace sluice::config {
namespace {

constexpr std::int64_t kMs = core::kNanosPerMilli;

using test::errors_of;

std::string breaker_route(const std::string& breaker) {
  return "upstreams:\n  app: {servers: [127.0.0.1:9]}\nroutes:\n  - name: api\n"
         "    upstream: app\n    breaker:\n" +
         breaker;
}

RuleSet loaded(const std::string& yaml) {
  Loaded l = load_config_text(yaml, "t.yaml");
  EXPECT_TRUE(l.errors.empty()) << errors_of(l);
  return l.rules ? *l.rules : RuleSet{};
}

TEST(BreakerConfig, DefaultsAreTheDocumentedOnes) {
  const RuleSet rs = loaded(breaker_route("      error_ratio: 0.5\n"));
  ASSERT_TRUE(rs.routes.at(0).breaker);
  const BreakerConfig& b = *rs.routes[0].breaker;
  EXPECT_EQ(b.params.error_ratio, 0.5);
  EXPECT_EQ(b.params.window, 1000 * kMs);
  EXPECT_EQ(b.params.min_requests, 5);
  EXPECT_EQ(b.params.open_for, 5000 * kMs);
  EXPECT_EQ(b.params.probes, 1);
  EXPECT_TRUE(b.errors.any_5xx && b.errors.timeout && b.errors.unreachable);
  EXPECT_FALSE(b.errors.any_4xx);
  EXPECT_EQ(b.fallback.status, 503);
  EXPECT_EQ(b.fallback.body, "Service Unavailable\n");
  EXPECT_FALSE(b.fallback.stale);
  EXPECT_EQ(rs.stale_cache.max_bytes, std::size_t{64} << 20);
  EXPECT_EQ(rs.stale_cache.max_entry, std::size_t{1} << 20);
}

TEST(BreakerConfig, ReadsEveryFieldAndWritesItBackEqual) {
  const std::string yaml =
      "stale_cache: {max_bytes: 8MiB, max_entry: 64KiB}\n" +
      breaker_route(
          "      error_ratio: 0.25\n      slow_ratio: 0.75\n      slow_call: 300ms\n"
          "      error_count: 7\n      window: 2s\n      min_requests: 20\n"
          "      open_for: 3s\n      probes: 4\n      errors: [5xx, 429, timeout]\n"
          "      fallback: {status: 502, body: \"later\\n\", stale: true,\n"
          "                 headers: {Retry-After: \"3\", Content-Type: text/html}}\n"
          "      stale_for: 90s\n");
  const RuleSet rs = loaded(yaml);
  ASSERT_TRUE(rs.routes.at(0).breaker);
  const BreakerConfig& b = *rs.routes[0].breaker;
  EXPECT_EQ(b.params.slow_ratio, 0.75);
  EXPECT_EQ(b.params.slow_call, 300 * kMs);
  EXPECT_EQ(b.params.error_count, 7);
  EXPECT_EQ(b.params.probes, 4);
  EXPECT_EQ(b.errors.statuses, std::vector<int>{429});
  EXPECT_FALSE(b.errors.unreachable);
  EXPECT_EQ(b.fallback.status, 502);
  EXPECT_TRUE(b.fallback.stale);
  EXPECT_EQ(b.fallback.stale_for, 90 * core::kNanosPerSecond);
  ASSERT_EQ(b.fallback.headers.size(), 2u);
  EXPECT_EQ(b.fallback.headers[1].first, "Content-Type");
  EXPECT_EQ(rs.stale_cache.max_entry, std::size_t{64} << 10);
  const RuleSet again = loaded(to_yaml(rs));
  ASSERT_EQ(again.routes.size(), 1u);
  EXPECT_EQ(again.routes[0].breaker, rs.routes[0].breaker) << to_yaml(rs);
  EXPECT_EQ(again.stale_cache, rs.stale_cache);
}

TEST(BreakerConfig, FallbackStaleIsTheDefaultStatusAnswerPlusTheCache) {
  const RuleSet rs =
      loaded(breaker_route("      error_count: 3\n      fallback: stale\n"
                           "      stale_for: 1m\n"));
  const BreakerConfig& b = *rs.routes.at(0).breaker;
  EXPECT_TRUE(b.fallback.stale);
  EXPECT_EQ(b.fallback.status, 503);
}

struct Bad {
  std::string breaker;
  std::string says;
};

class BadBreaker : public testing::TestWithParam<Bad> {};

TEST_P(BadBreaker, IsRefusedWithItsFieldAndLine) {
  const Loaded l = load_config_text(breaker_route(GetParam().breaker), "t.yaml");
  const std::string errors = errors_of(l);
  EXPECT_FALSE(l.errors.empty());
  EXPECT_NE(errors.find(GetParam().says), std::string::npos) << errors;
  EXPECT_NE(errors.find("t.yaml:"), std::string::npos) << errors;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadBreaker,
    testing::Values(
        Bad{"      error_ratio: 0\n", "'breaker.error_ratio': expected a ratio above 0"},
        Bad{"      error_ratio: 1.5\n", "'breaker.error_ratio'"},
        Bad{"      window: 10s\n", "a breaker needs what trips it"},
        Bad{"      error_ratio: 0.5\n      probes: 0\n", "'breaker.probes': 0 is out of range"},
        Bad{"      error_ratio: 0.5\n      window: 50ms\n", "'breaker.window': at least 100ms"},
        Bad{"      slow_ratio: 0.5\n", "'breaker.slow_ratio': needs slow_call"},
        Bad{"      error_ratio: 0.5\n      slow_call: 1s\n", "'breaker.slow_call': trips nothing"},
        Bad{"      error_ratio: 0.5\n      errors: [6xx]\n",
            "'breaker.errors': '6xx' is not a kind of failure"},
        Bad{"      error_ratio: 0.5\n      errors: []\n", "'breaker.errors': is empty"},
        Bad{"      error_ratio: 0.5\n      fallback: stale\n", "'breaker.stale_for'"},
        Bad{"      error_ratio: 0.5\n      stale_for: 1m\n", "applies with fallback: stale"},
        Bad{"      error_ratio: 0.5\n      fallback: later\n", "'breaker.fallback'"},
        Bad{"      error_ratio: 0.5\n      fallback: {status: 99}\n", "'breaker.fallback.status'"},
        Bad{"      error_ratio: 0.5\n      fallback: {headers: {\"a b\": x}}\n",
            "is not a header name"},
        Bad{"      error_ratio: 0.5\n      open: 1s\n", "unknown field 'breaker.open'"}));

TEST(BreakerConfig, ARouteThatAnswersItselfTakesNoBreaker) {
  const Loaded l = load_config_text(
      "routes:\n  - name: h\n    respond: {status: 200}\n    breaker: {error_ratio: 0.5}\n",
      "t.yaml");
  EXPECT_NE(errors_of(l).find("'breaker': applies to a route that proxies"), std::string::npos)
      << errors_of(l);
}

TEST(BreakerConfig, AStaleEntryOverTheWholeIsRefused) {
  const Loaded l = load_config_text("stale_cache: {max_bytes: 1MiB, max_entry: 2MiB}\n", "t.yaml");
  EXPECT_NE(errors_of(l).find("'stale_cache.max_entry'"), std::string::npos) << errors_of(l);
}

}  // namespace
}  // namespace sluice::config
