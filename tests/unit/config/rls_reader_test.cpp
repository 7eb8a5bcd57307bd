// The envoyproxy/ratelimit-style YAML, read by the same reader as the main config: what
// loads, how a rate_limit maps onto a Sluice limit spec, and every error at its file and line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sluice/config/loader.hpp"

namespace sluice::config {
namespace {

RlsLoaded load(const std::string& yaml) { return load_rls_text(yaml, "rls.yaml"); }

// The errors of `yaml`, each formatted "file:line: message", joined by newlines.
std::string rls_errors_of(const std::string& yaml) {
  const RlsLoaded loaded = load(yaml);
  EXPECT_TRUE(loaded.domains.empty());
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
  ASSERT_TRUE(loaded.errors.empty()) << loaded.errors.front().format();
  const auto& domains = loaded.domains;
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
  const std::string errors = rls_errors_of(R"(domain: edge
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
  // Each names the domain, the descriptor and the field, as the main config's errors do.
  const char* expected[] = {
      "rls.yaml:5: domain 'edge': descriptor 'a': field 'rate_limit.unit': 'week' is not one of "
      "second, minute, hour, day\n",
      "rls.yaml:8: domain 'edge': descriptor 'b': field 'rate_limit.unit': 'month' is not one of "
      "second, minute, hour, day (a calendar month or year has no fixed length for a window)\n",
      "rls.yaml:10: domain 'edge': descriptor 'c': field 'rate_limit.requests_per_unit': must be a "
      "whole number from 0 to 4294967295 (a uint32 in the RLS protocol), not '-1'\n",
      "rls.yaml:12: domain 'edge': descriptor 'd': field 'rate_limit': rate_limit has no "
      "'requests_per_unit' (0 refuses every request)\n",
      "rls.yaml:14: domain 'edge': descriptor 'e': unknown field 'rate_limt' (accepted: key, "
      "value, "
      "rate_limit, descriptors, shadow_mode, detailed_metric, value_to_metric, share_threshold)\n",
      "rls.yaml:16: domain 'edge': descriptor 'f': field 'rate_limit.unit': an unlimited "
      "rate_limit takes no 'unit'\n",
      "rls.yaml:17: domain 'edge': descriptor has no 'key'\n",
      "rls.yaml:20: domain 'edge': descriptor 'h=x' given twice on this level (first at line 18)\n",
      "rls.yaml:23: domain 'edge': descriptor 'i': field 'rate_limit.algorithm': algorithm "
      "'leaky-bucket' cannot answer a rate limit request (accepted: fixed-window, "
      "sliding-window, gcra, token-bucket)\n",
      "rls.yaml:25: domain 'edge': descriptor 'j': field 'rate_limit.replaces': "
      "(envoyproxy/ratelimit) is not supported by Sluice\n",
      "rls.yaml:27: domain 'edge': descriptor 'k': field 'shadow_mode': expected true or false, "
      "got 'sometimes'\n",
  };
  for (const char* e : expected)
    EXPECT_NE(errors.find(e), std::string::npos) << e << "\n" << errors;
}

// yaml-cpp 0.7's LoadAll loops for ever, allocating, on a ',' where a document starts (found
// by tests/fuzz/config_fuzz.cpp): each such file must be one syntax error, at once.
TEST(RlsConfig, AStrayCommaWhereADocumentStartsIsASyntaxErrorNotAnEndlessLoad) {
  EXPECT_EQ(rls_errors_of(","),
            "rls.yaml:1: YAML syntax: unexpected ',' (no document starts here)\n");
  EXPECT_EQ(rls_errors_of("domain: a\ndescriptors: []\n---\n,\n"),
            "rls.yaml:4: YAML syntax: unexpected ',' (no document starts here)\n");
}

TEST(RlsConfig, DomainErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"descriptors: []\n", "rls.yaml:1: missing field 'domain'"},
      {"domain: ''\n", "rls.yaml:1: field 'domain': is empty"},
      {"domain: a\n---\ndomain: a\n", "rls.yaml:3: domain 'a' defined twice (first at rls.yaml:1)"},
      {"- 1\n- 2\n", "rls.yaml:1: a domain is a mapping with 'domain' and 'descriptors'"},
      {"domain: a\ndescriptors: [\n", "rls.yaml:3: YAML syntax"},
  };
  for (const auto& [yaml, expected] : cases) {
    const std::string errors = rls_errors_of(yaml);
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
  const Loaded loaded = load_rls_files({a, b});
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_EQ(loaded.errors[0].format(), b + ":3: domain 'one' defined twice (first at " + a + ":1)");
  const Loaded fine = load_rls_files({a});
  ASSERT_TRUE(fine.rules.has_value());
  EXPECT_EQ(fine.rules->rls->domains.size(), 1u);
  EXPECT_EQ(fine.rules->rls->domains[0].file, a);
  std::filesystem::remove_all(dir);

  const Loaded missing = load_rls_files({"/nonexistent/rls.yaml"});
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_EQ(missing.errors[0].format(),
            "/nonexistent/rls.yaml: cannot read: No such file or directory");
}

TEST(RlsConfig, MaxDescriptorsAndMaxConcurrentStreamsHaveDefaultsRangesAndWriteBack) {
  const Loaded defaults = load_config_text("rls: {}\n", "s.yaml");
  ASSERT_TRUE(defaults.rules.has_value());
  EXPECT_EQ(defaults.rules->rls->max_descriptors, 10000);
  EXPECT_EQ(defaults.rules->rls->max_concurrent_streams, 100);
  const Loaded set =
      load_config_text("rls:\n  max_descriptors: 50\n  max_concurrent_streams: 8\n", "s.yaml");
  ASSERT_TRUE(set.rules.has_value());
  EXPECT_EQ(set.rules->rls->max_descriptors, 50);
  EXPECT_EQ(set.rules->rls->max_concurrent_streams, 8);
  const Loaded again = load_config_text(to_yaml(*set.rules), "s.yaml");
  ASSERT_TRUE(again.rules.has_value());
  EXPECT_EQ(again.rules->rls->max_descriptors, 50);
  EXPECT_EQ(again.rules->rls->max_concurrent_streams, 8);

  const Loaded bad = load_config_text(
      "rls:\n  max_descriptors: 0\n  max_concurrent_streams: 3000000000\n", "s.yaml");
  ASSERT_EQ(bad.errors.size(), 2u);
  EXPECT_EQ(bad.errors[0].format(),
            "s.yaml:2: field 'rls.max_descriptors': 0 is out of range (accepted: 1 to 2097152)");
  EXPECT_EQ(bad.errors[1].format(),
            "s.yaml:3: field 'rls.max_concurrent_streams': 3000000000 is out of range (accepted: "
            "1 to 2147483647)");
}

}  // namespace
}  // namespace sluice::config
