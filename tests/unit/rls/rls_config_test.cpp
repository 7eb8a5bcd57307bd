// The envoyproxy/ratelimit-style YAML: what loads, how a rate_limit maps onto a Sluice limit
// spec, and every error placed on its file and line.
#include "sluice/server/rls_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sluice::server {
namespace {

RlsLoaded load(const std::string& yaml) { return load_rls_config_text(yaml, "rls.yaml"); }

// The errors of `yaml`, each formatted "file:line: message", joined by newlines.
std::string errors_of(const std::string& yaml) {
  const RlsLoaded loaded = load(yaml);
  EXPECT_FALSE(loaded.config.has_value());
  std::string out;
  for (const auto& e : loaded.errors) out += e.format() + "\n";
  return out;
}

TEST(RlsConfig, LoadsEnvoyRatelimitStyleDomains) {
  const RlsLoaded loaded = load(R"(domain: edge
descriptors:
  - key: remote_address
    rate_limit:
      unit: MINUTE
      requests_per_unit: 10
  - key: remote_address
    value: 10.0.0.1
    rate_limit: {unit: second, requests_per_unit: 0, name: blocked}
  - key: path
    value: /health
    rate_limit: {unlimited: true}
  - key: client
    shadow_mode: true
    detailed_metric: true
    rate_limit: {unit: hour, requests_per_unit: 100, algorithm: gcra}
    descriptors:
      - key: path
        descriptors:
          - key: method
            value: POST
            rate_limit: {unit: day, requests_per_unit: 5}
  - key: whitelisted
---
domain: internal
descriptors: []
)");
  ASSERT_TRUE(loaded.config.has_value()) << loaded.errors.front().format();
  const auto& domains = loaded.config->domains;
  ASSERT_EQ(domains.size(), 2u);
  EXPECT_EQ(domains[0].name, "edge");
  EXPECT_EQ(domains[1].name, "internal");
  const auto& d = domains[0].descriptors;
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].rate_limit->unit, RlsUnit::kMinute);
  EXPECT_EQ(d[0].rate_limit->requests_per_unit, 10u);
  EXPECT_EQ(d[1].value, "10.0.0.1");
  EXPECT_EQ(d[1].rate_limit->requests_per_unit, 0u);
  EXPECT_EQ(d[1].rate_limit->name, "blocked");
  EXPECT_TRUE(d[2].rate_limit->unlimited);
  EXPECT_TRUE(d[3].shadow_mode);
  EXPECT_EQ(d[3].rate_limit->algorithm, "gcra");
  EXPECT_EQ(d[3].descriptors[0].descriptors[0].rate_limit->unit, RlsUnit::kDay);
  EXPECT_EQ(d[3].descriptors[0].descriptors[0].line, 20);
  EXPECT_FALSE(d[4].rate_limit.has_value());
}

TEST(RlsConfig, MapsEachUnitOntoAClockAlignedFixedWindow) {
  RlsRateLimit limit;
  limit.requests_per_unit = 10;
  const std::pair<RlsUnit, std::string> cases[] = {{RlsUnit::kSecond, "1s"},
                                                   {RlsUnit::kMinute, "1m"},
                                                   {RlsUnit::kHour, "1h"},
                                                   {RlsUnit::kDay, "24h"}};
  for (const auto& [unit, window] : cases) {
    limit.unit = unit;
    const auto spec = rls_limit_spec(limit);
    ASSERT_TRUE(spec) << spec.error();
    EXPECT_EQ(spec->algorithm, "fixed-window");
    const auto& p = std::get<core::FixedWindow::Params>(spec->params);
    EXPECT_EQ(p.limit, 10);
    EXPECT_EQ(p.window, unit_length(unit)) << window;
  }
}

TEST(RlsConfig, AlgorithmExtensionKeepsTheCapacity) {
  RlsRateLimit limit;
  limit.requests_per_unit = 30;
  limit.unit = RlsUnit::kMinute;
  limit.algorithm = "gcra";
  auto spec = rls_limit_spec(limit);
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(std::get<core::Gcra::Params>(spec->params).burst, 29);  // limit = burst + 1 = 30
  limit.algorithm = "token-bucket";
  spec = rls_limit_spec(limit);
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(std::get<core::TokenBucket::Params>(spec->params).burst, 30);
  limit.algorithm = "sliding-window";
  EXPECT_TRUE(rls_limit_spec(limit));
  limit.algorithm = "leaky-bucket";  // delays; an RLS answer cannot
  spec = rls_limit_spec(limit);
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().find("accepted: fixed-window, sliding-window, gcra, token-bucket"),
            std::string::npos);
  limit.algorithm = "gcra";
  limit.requests_per_unit = 0;
  EXPECT_FALSE(rls_limit_spec(limit));
}

TEST(RlsConfig, ErrorsCarryFileAndLine) {
  const std::string errors = errors_of(R"(domain: edge
descriptors:
  - key: a
    rate_limit:
      unit: week
      requests_per_unit: 10
  - key: b
    rate_limit: {unit: month, requests_per_unit: 1}
  - key: c
    rate_limit: {unit: second, requests_per_unit: -1}
  - key: d
    rate_limit: {unit: second}
  - key: e
    rate_limt: {unit: second, requests_per_unit: 1}
  - key: f
    rate_limit: {unlimited: true, unit: second}
  - value: g
  - key: h
    value: x
  - key: h
    value: x
  - key: i
    rate_limit: {unit: second, requests_per_unit: 1, algorithm: leaky-bucket}
  - key: j
    rate_limit: {unit: second, requests_per_unit: 1, replaces: [{name: x}]}
  - key: k
    shadow_mode: sometimes
)");
  const char* expected[] = {
      "rls.yaml:5: descriptor 'a': unit 'week' is not one of second, minute, hour, day\n",
      "rls.yaml:8: descriptor 'b': unit 'month' is not one of second, minute, hour, day (a "
      "calendar month or year has no fixed length for a window)\n",
      "rls.yaml:10: field 'requests_per_unit' must be a whole number from 0 to 4294967295",
      "rls.yaml:12: descriptor 'd': rate_limit has no 'requests_per_unit'",
      "rls.yaml:14: unknown field 'rate_limt' (accepted: key, value, rate_limit, descriptors, "
      "shadow_mode, detailed_metric, value_to_metric)\n",
      "rls.yaml:16: descriptor 'f': an unlimited rate_limit takes no 'unit'\n",
      "rls.yaml:17: descriptor has no 'key'\n",
      "rls.yaml:20: descriptor 'h=x' given twice on this level (first at line 18)\n",
      "rls.yaml:23: descriptor 'i': algorithm 'leaky-bucket' cannot answer a rate limit request",
      "rls.yaml:25: descriptor 'j': rate_limit: field 'replaces' (envoyproxy/ratelimit) is not "
      "supported by Sluice\n",
      "rls.yaml:27: field 'shadow_mode' must be true or false\n",
  };
  for (const char* e : expected)
    EXPECT_NE(errors.find(e), std::string::npos) << e << "\n" << errors;
}

TEST(RlsConfig, DomainErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"descriptors: []\n", "rls.yaml:1: missing field 'domain'"},
      {"domain: ''\n", "rls.yaml:1: field 'domain' is empty"},
      {"domain: a\n---\ndomain: a\n", "rls.yaml:3: domain 'a' defined twice (first at rls.yaml:1)"},
      {"- 1\n- 2\n", "rls.yaml:1: a domain file is a mapping"},
      {"domain: a\ndescriptors: [\n", "rls.yaml:3: YAML syntax"},
  };
  for (const auto& [yaml, expected] : cases) {
    const std::string errors = errors_of(yaml);
    EXPECT_NE(errors.find(expected), std::string::npos) << yaml << "\n" << errors;
  }
}

TEST(RlsConfig, FilesAddDomainsAndDefineEachOnce) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("rls_config_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "a.yaml").string();
  const std::string b = (dir / "b.yaml").string();
  std::ofstream(a) << "domain: one\n";
  std::ofstream(b) << "domain: two\n---\ndomain: one\n";
  const RlsLoaded loaded = load_rls_config_files({a, b});
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_EQ(loaded.errors[0].format(), b + ":3: domain 'one' defined twice (first at " + a + ":1)");
  const RlsLoaded fine = load_rls_config_files({a});
  ASSERT_TRUE(fine.config.has_value());
  EXPECT_EQ(fine.config->domains.size(), 1u);
  std::filesystem::remove_all(dir);

  const RlsLoaded missing = load_rls_config_files({"/nonexistent/rls.yaml"});
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_EQ(missing.errors[0].format(), "/nonexistent/rls.yaml: cannot read the file");
}

}  // namespace
}  // namespace sluice::server
