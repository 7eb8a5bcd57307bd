// The YAML config: every file of the corpus (tests/testdata/config) loads or fails as its
// header says, to_yaml round-trips, single rules come from JSON, and validate() cross-checks.
#include "sluice/config/loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "sluice/config/rule_json.hpp"
#include "sluice/config/rule_text_cache.hpp"

namespace sluice::config {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceRoot = SLUICE_SOURCE_DIR;  // tests/CMakeLists.txt
const fs::path kCorpus = kSourceRoot / "tests" / "testdata" / "config";

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> good_files() {
  auto files = files_in(kCorpus / "good");
  files.push_back(kSourceRoot / "examples" / "gateway.yaml");
  files.push_back(kSourceRoot / "examples" / "adaptive.yaml");
  files.push_back(kSourceRoot / "examples" / "tiers.yaml");
  return files;
}

struct Expectation {
  int line;
  std::string substring;
};

// The leading "# expect: LINE: substring" lines of a bad file.
std::vector<Expectation> expectations_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<Expectation> out;
  const std::regex header(R"(# expect: (\d+): (.*))");
  std::string line;
  std::smatch m;
  while (std::getline(in, line) && std::regex_match(line, m, header)) {
    out.push_back({std::stoi(m[1]), m[2]});
  }
  return out;
}

std::string all_errors(const Loaded& loaded) {
  std::string out;
  for (const auto& e : loaded.errors) out += e.format() + "\n";
  return out;
}

RuleSet load_ok(const std::string& yaml) {
  Loaded loaded = load_config_text(yaml, "test.yaml");
  EXPECT_TRUE(loaded.errors.empty()) << all_errors(loaded) << yaml;
  return loaded.rules.value_or(RuleSet{});
}

std::vector<ConfigError> load_errors(const std::string& yaml) {
  Loaded loaded = load_config_text(yaml, "test.yaml");
  EXPECT_FALSE(loaded.rules.has_value());
  return loaded.errors;
}

// Field by field, ignoring source lines (a written-back file has its own).
// A rule's tiers or overrides as "name=limit" texts (their lines differ once written out).
std::vector<std::string> limit_texts(const std::vector<LimitVariant>& variants) {
  std::vector<std::string> out;
  for (const auto& v : variants) out.push_back(v.name + "=" + v.limit_text);
  return out;
}

void expect_same(const RuleSet& a, const RuleSet& b) {
  EXPECT_EQ(a.listen, b.listen);
  EXPECT_EQ(a.admin, b.admin);
  EXPECT_EQ(a.check, b.check);
  EXPECT_EQ(a.check_on_admin, b.check_on_admin);
  EXPECT_EQ(a.admin_auth, b.admin_auth);
  EXPECT_EQ(a.admin_hosts, b.admin_hosts);
  EXPECT_EQ(a.workers, b.workers);
  EXPECT_EQ(a.trusted_proxies, b.trusted_proxies);
  EXPECT_EQ(a.memory, b.memory);
  EXPECT_EQ(a.timeouts.connect, b.timeouts.connect);
  EXPECT_EQ(a.timeouts.header, b.timeouts.header);
  EXPECT_EQ(a.timeouts.idle, b.timeouts.idle);
  EXPECT_EQ(a.timeouts.upstream, b.timeouts.upstream);
  EXPECT_EQ(a.timeouts.body, b.timeouts.body);
  EXPECT_EQ(a.bodies, b.bodies);
  EXPECT_EQ(a.ratelimit_headers, b.ratelimit_headers);
  EXPECT_EQ(a.legacy_headers, b.legacy_headers);
  EXPECT_EQ(a.ratelimit_draft, b.ratelimit_draft);
  EXPECT_EQ(a.access_log, b.access_log);
  EXPECT_EQ(a.access_log_format, b.access_log_format);
  EXPECT_EQ(a.write_back, b.write_back);
  ASSERT_EQ(a.upstreams.size(), b.upstreams.size());
  for (std::size_t i = 0; i < a.upstreams.size(); ++i) {
    EXPECT_EQ(a.upstreams[i].name, b.upstreams[i].name);
    EXPECT_EQ(a.upstreams[i].servers, b.upstreams[i].servers);
    EXPECT_EQ(a.upstreams[i].max_fails, b.upstreams[i].max_fails);
    EXPECT_EQ(a.upstreams[i].fail_timeout, b.upstreams[i].fail_timeout);
  }
  ASSERT_EQ(a.routes.size(), b.routes.size());
  for (std::size_t i = 0; i < a.routes.size(); ++i) {
    const Route& x = a.routes[i];
    const Route& y = b.routes[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.match.host, y.match.host);
    EXPECT_EQ(x.match.path_prefix, y.match.path_prefix);
    EXPECT_EQ(x.match.path_exact, y.match.path_exact);
    EXPECT_EQ(x.match.methods, y.match.methods);
    EXPECT_EQ(x.upstream, y.upstream);
    EXPECT_EQ(x.respond_status, y.respond_status);
    EXPECT_EQ(x.respond_body, y.respond_body);
    EXPECT_EQ(x.rules, y.rules);
    EXPECT_EQ(x.combine, y.combine);
    EXPECT_EQ(x.request_buffering, y.request_buffering);
    EXPECT_EQ(x.adaptive, y.adaptive);
  }
  ASSERT_EQ(a.rules.size(), b.rules.size());
  for (std::size_t i = 0; i < a.rules.size(); ++i) {
    const Rule& x = a.rules[i];
    const Rule& y = b.rules[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.limit_text, y.limit_text);
    EXPECT_EQ(x.limit.canonical, y.limit.canonical);
    EXPECT_EQ(x.key, y.key);
    EXPECT_EQ(x.action, y.action);
    EXPECT_EQ(x.max_wait, y.max_wait);
    EXPECT_EQ(x.status, y.status);
    EXPECT_EQ(x.body, y.body);
    EXPECT_EQ(x.on_missing_key, y.on_missing_key);
    EXPECT_EQ(x.log_key, y.log_key);
    EXPECT_EQ(x.tier, y.tier);
    EXPECT_EQ(limit_texts(x.tiers), limit_texts(y.tiers));
    EXPECT_EQ(limit_texts(x.overrides), limit_texts(y.overrides));
    EXPECT_EQ(x.on_change, y.on_change);
  }
}

TEST(ConfigCorpus, EveryGoodFileLoads) {
  const auto files = good_files();
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    Loaded loaded = load_config_file(file.string());
    EXPECT_TRUE(loaded.rules.has_value() && loaded.errors.empty()) << file << "\n"
                                                                   << all_errors(loaded);
  }
}

TEST(ConfigCorpus, EveryBadFileFailsWithExactlyItsExpectedErrors) {
  const auto files = files_in(kCorpus / "bad");
  ASSERT_GE(files.size(), 40u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const auto expected = expectations_of(file);
    ASSERT_FALSE(expected.empty()) << "no '# expect: LINE: substring' header";
    Loaded loaded = load_config_file(file.string());
    EXPECT_FALSE(loaded.rules.has_value());
    ASSERT_EQ(loaded.errors.size(), expected.size()) << all_errors(loaded);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(loaded.errors[i].file, file.string());
      EXPECT_EQ(loaded.errors[i].line, expected[i].line) << all_errors(loaded);
      EXPECT_NE(loaded.errors[i].message.find(expected[i].substring), std::string::npos)
          << "expected '" << expected[i].substring << "' in\n"
          << all_errors(loaded);
    }
  }
}

TEST(ConfigLoader, DefaultsAreTheDocumentedOnes) {
  const RuleSet rs = load_ok("rules:\n  r: {limit: 'gcra:rate=1/s,burst=1', key: client_ip}\n");
  EXPECT_FALSE(rs.listen.has_value());
  EXPECT_EQ(rs.admin, (Endpoint{"127.0.0.1", 9090}));
  EXPECT_EQ(rs.workers, 0);
  EXPECT_TRUE(rs.trusted_proxies.empty());
  EXPECT_EQ(rs.memory, std::size_t{64} << 20);
  EXPECT_EQ(rs.timeouts.connect, 2 * core::kNanosPerSecond);
  EXPECT_EQ(rs.timeouts.header, 10 * core::kNanosPerSecond);
  EXPECT_EQ(rs.timeouts.idle, 60 * core::kNanosPerSecond);
  EXPECT_EQ(rs.timeouts.upstream, 30 * core::kNanosPerSecond);
  EXPECT_EQ(rs.timeouts.body, 60 * core::kNanosPerSecond);
  EXPECT_EQ(rs.bodies.buffer, std::size_t{64} << 10);
  EXPECT_EQ(rs.bodies.max_size, 0u);
  EXPECT_EQ(rs.bodies.min_rate, 1024u);
  EXPECT_EQ(rs.bodies.max_buffered, std::size_t{16} << 20);
  EXPECT_EQ(rs.bodies.temp_dir, "");
  EXPECT_TRUE(rs.ratelimit_headers);
  EXPECT_FALSE(rs.legacy_headers);
  EXPECT_EQ(rs.ratelimit_draft, proto::http::RateLimitDraft::k12);
  EXPECT_EQ(rs.access_log, "");
  EXPECT_TRUE(rs.write_back);
  EXPECT_EQ(rs.check, std::nullopt);
  EXPECT_TRUE(rs.check_on_admin);
  EXPECT_EQ(rs.admin_auth, AdminAuth{});
  EXPECT_TRUE(rs.admin_hosts.empty());
  ASSERT_EQ(rs.rules.size(), 1u);
  const Rule& r = rs.rules[0];
  EXPECT_EQ(r.action, Action::kReject);
  EXPECT_EQ(r.max_wait, 0);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.body, "Too Many Requests\n");
  EXPECT_EQ(r.on_missing_key, OnMissingKey::kSkip);
  EXPECT_EQ(r.line, 2);
}

TEST(ConfigLoader, ReadsEveryFieldOfTheFullExample) {
  Loaded loaded = load_config_file((kCorpus / "good" / "gateway_full.yaml").string());
  ASSERT_TRUE(loaded.rules) << all_errors(loaded);
  const RuleSet& rs = *loaded.rules;
  EXPECT_EQ(rs.listen, (Endpoint{"0.0.0.0", 8080}));
  EXPECT_EQ(rs.admin, (Endpoint{"127.0.0.1", 9091}));
  EXPECT_EQ(rs.workers, 4);
  ASSERT_EQ(rs.trusted_proxies.size(), 5u);
  EXPECT_FALSE(rs.trusted_proxies[1].v6);
  EXPECT_EQ(rs.trusted_proxies[1].prefix, 8);
  EXPECT_EQ(rs.trusted_proxies[1].bytes[0], 10);
  EXPECT_TRUE(rs.trusted_proxies[3].v6);
  EXPECT_EQ(rs.trusted_proxies[3].prefix, 128);
  EXPECT_EQ(rs.trusted_proxies[3].bytes[15], 1);
  EXPECT_EQ(rs.memory, std::size_t{16} << 20);
  EXPECT_EQ(rs.timeouts.upstream, 15 * core::kNanosPerSecond);
  EXPECT_EQ(rs.timeouts.body, 20 * core::kNanosPerSecond);
  EXPECT_EQ(rs.bodies,
            (BodyLimits{1u << 20, 10u << 20, 4u << 10, 8u << 20, "/var/cache/sluice/bodies"}));
  EXPECT_TRUE(rs.legacy_headers);
  EXPECT_EQ(rs.ratelimit_draft, proto::http::RateLimitDraft::k11);
  EXPECT_EQ(rs.access_log, "/var/log/sluice/access.log");
  EXPECT_FALSE(rs.write_back);

  const Upstream* app = rs.upstream("app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->servers.size(), 3u);
  EXPECT_EQ(app->servers[2], (Endpoint{"localhost", 8083}));
  EXPECT_EQ(app->max_fails, 3);
  EXPECT_EQ(app->fail_timeout, 30 * core::kNanosPerSecond);
  EXPECT_EQ(rs.upstream("search")->servers[0], (Endpoint{"::1", 8090}));
  EXPECT_EQ(rs.upstream("nope"), nullptr);

  ASSERT_EQ(rs.routes.size(), 4u);
  EXPECT_EQ(rs.routes[0].match.host, "api.example.com");
  EXPECT_EQ(rs.routes[0].match.path_prefix, "/api/");
  EXPECT_EQ(rs.routes[0].match.methods, (std::vector<std::string>{"GET", "POST", "PUT", "DELETE"}));
  EXPECT_EQ(rs.routes[0].rules, (std::vector<std::string>{"global", "per-user", "uploads"}));
  EXPECT_EQ(rs.routes[1].combine, Combine::kFirst);
  EXPECT_TRUE(rs.routes[0].request_buffering);
  EXPECT_FALSE(rs.routes[3].request_buffering);
  EXPECT_EQ(rs.routes[1].match.path_exact, "/search");
  EXPECT_EQ(rs.routes[2].respond_status, 200);
  EXPECT_EQ(rs.routes[2].respond_body, "ok\n");
  EXPECT_TRUE(rs.routes[2].upstream.empty());

  const Rule* per_user = rs.rule("per-user");
  ASSERT_NE(per_user, nullptr);
  EXPECT_EQ(per_user->limit.algorithm, "token-bucket");
  EXPECT_EQ(per_user->key, (std::vector<KeyPart>{{KeyPart::Kind::kQuery, "userId"}}));
  EXPECT_EQ(per_user->action, Action::kDelay);
  EXPECT_EQ(per_user->max_wait, 500 * core::kNanosPerMilli);
  EXPECT_EQ(per_user->status, 503);
  EXPECT_EQ(per_user->body, "{\"error\": \"slow down\"}\n");
  EXPECT_EQ(per_user->on_missing_key, OnMissingKey::kDeny);
  EXPECT_EQ(rs.rule("global")->action, Action::kDryRun);
  EXPECT_EQ(rs.rule("uploads")->key, (std::vector<KeyPart>{{KeyPart::Kind::kHeader, "X-Api-Key"},
                                                           {KeyPart::Kind::kMethod, ""}}));
  EXPECT_EQ(rs.rule("nope"), nullptr);
}

TEST(ConfigLoader, ReadsTheAdminListenersAccessSettings) {
  Loaded loaded = load_config_file((kCorpus / "good" / "admin_access.yaml").string());
  ASSERT_TRUE(loaded.rules) << all_errors(loaded);
  const RuleSet& rs = *loaded.rules;
  EXPECT_EQ(rs.admin, (Endpoint{"0.0.0.0", 9090}));
  EXPECT_EQ(rs.check, (Endpoint{"0.0.0.0", 9091}));
  EXPECT_FALSE(rs.check_on_admin);
  EXPECT_EQ(rs.admin_auth.token_file, "/etc/sluice/admin.token");
  EXPECT_EQ(rs.admin_auth.line, 6);
  EXPECT_FALSE(rs.admin_auth.insecure);
  // Host names are compared without letter case, so they are kept in lower case.
  EXPECT_EQ(rs.admin_hosts, (std::vector<std::string>{"sluice.internal", "admin.example.com",
                                                      "10.0.0.5", "[fd00::5]"}));

  loaded = load_config_file((kCorpus / "good" / "admin_token_env.yaml").string());
  ASSERT_TRUE(loaded.rules) << all_errors(loaded);
  EXPECT_EQ(loaded.rules->admin_auth.token_env, "SLUICE_ADMIN_TOKEN");
  EXPECT_TRUE(loaded.rules->admin_auth.insecure);
}

TEST(ConfigLoader, ReadsEveryKeyKind) {
  Loaded loaded = load_config_file((kCorpus / "good" / "key_kinds.yaml").string());
  ASSERT_TRUE(loaded.rules) << all_errors(loaded);
  using K = KeyPart::Kind;
  const std::vector<std::pair<std::string, KeyPart>> expected = {
      {"by-ip", {K::kClientIp, ""}},
      {"by-header", {K::kHeader, "X-Api-Key"}},
      {"by-query", {K::kQuery, "userId"}},
      {"by-cookie", {K::kCookie, "session_id"}},
      {"by-path", {K::kPath, ""}},
      {"by-route", {K::kRoute, ""}},
      {"by-method", {K::kMethod, ""}},
      {"by-host", {K::kHost, ""}},
      {"global", {K::kConst, "all clients: one limit"}}};
  for (const auto& [name, part] : expected) {
    EXPECT_EQ(loaded.rules->rule(name)->key, std::vector<KeyPart>{part}) << name;
  }
  EXPECT_EQ(loaded.rules->rule("combined")->key.size(), 3u);
}

TEST(ConfigLoader, SyntaxErrorsCarryTheOneBasedLine) {
  const auto errors = load_errors("rules:\n  a: {limit: x\n  b: 1\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_NE(errors[0].message.find("YAML syntax"), std::string::npos) << errors[0].message;
}

TEST(ConfigLoader, AnUnreadableFileIsOneErrorWithoutALine) {
  Loaded loaded = load_config_file("/nonexistent/sluice.yaml");
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_EQ(loaded.errors[0].line, 0);
  EXPECT_EQ(loaded.errors[0].format(),
            "/nonexistent/sluice.yaml: cannot read: No such file or directory");
}

TEST(ConfigError, FormatsAsFileLineMessage) {
  EXPECT_EQ((ConfigError{"a.yaml", 7, "bad"}).format(), "a.yaml:7: bad");
  EXPECT_EQ((ConfigError{"a.yaml", 0, "bad"}).format(), "a.yaml: bad");
}

TEST(ConfigWriter, ToYamlRoundTripsEveryGoodFile) {
  for (const auto& file : good_files()) {
    SCOPED_TRACE(file.string());
    Loaded first = load_config_file(file.string());
    ASSERT_TRUE(first.rules) << all_errors(first);
    const std::string yaml = to_yaml(*first.rules);
    Loaded second = load_config_text(yaml, "written.yaml");
    ASSERT_TRUE(second.rules) << all_errors(second) << yaml;
    expect_same(*first.rules, *second.rules);
    EXPECT_EQ(to_yaml(*second.rules), yaml);
  }
}

TEST(ConfigWriter, ToYamlKeepsAwkwardText) {
  const RuleSet rs = load_ok(R"(access_log: "null"
routes:
  - name: r
    match: {host: "true"}
    respond: {status: 404, body: "quote \" backslash \\ tab \t bell \a é \u2603\n"}
    rules: [n]
rules:
  n:
    limit: "gcra:rate=1/s,burst=1"
    key: ["const:null", "const:- [a, b]: #c", "cookie:~", header:Yes]
    body: ""
)");
  const std::string yaml = to_yaml(rs);
  Loaded again = load_config_text(yaml, "written.yaml");
  ASSERT_TRUE(again.rules) << all_errors(again) << yaml;
  expect_same(rs, *again.rules);
  EXPECT_EQ(again.rules->access_log, "null");
  EXPECT_EQ(again.rules->rules[0].key[1].name, "- [a, b]: #c");
}

TEST(ConfigLoader, AccessLogIsAPathOrAPathAndAFormat) {
  const RuleSet plain = load_ok("access_log: stdout\n");
  EXPECT_EQ(plain.access_log, "stdout");
  EXPECT_EQ(plain.access_log_format, AccessLogFormat::kText);
  const RuleSet json = load_ok("access_log: {path: /tmp/a.log, format: json}\n");
  EXPECT_EQ(json.access_log, "/tmp/a.log");
  EXPECT_EQ(json.access_log_format, AccessLogFormat::kJson);
  const RuleSet text = load_ok("access_log: {path: stdout}\n");
  EXPECT_EQ(text.access_log, "stdout");
  EXPECT_EQ(text.access_log_format, AccessLogFormat::kText);
  EXPECT_EQ(load_ok("access_log: \"\"\n").access_log, "");
}

TEST(ConfigWriter, AccessLogFormatAndLogKeyRoundTrip) {
  for (const char* yaml : {"access_log: {path: /tmp/a b.log, format: json}\n",
                           "access_log: {path: stdout, format: text}\n", "access_log: stdout\n"}) {
    RuleSet rs = load_ok(std::string(yaml) + R"(rules:
  h: {limit: "gcra:rate=1/s,burst=1", key: "header:X-User", log_key: hash}
  r: {limit: "gcra:rate=1/s,burst=1", key: client_ip, log_key: raw}
)");
    EXPECT_EQ(rs.rules[0].log_key, LogKey::kHash);
    EXPECT_EQ(rs.rules[1].log_key, LogKey::kRaw);
    const std::string written = to_yaml(rs);
    Loaded again = load_config_text(written, "written.yaml");
    ASSERT_TRUE(again.rules) << all_errors(again) << written;
    expect_same(rs, *again.rules);
    // The admin API's JSON of a rule reads back to the same rule.
    const auto parsed = parse_rule("h", rule_to_json(rs.rules[0]));
    ASSERT_TRUE(parsed) << parsed.error();
    EXPECT_EQ(parsed.rule->log_key, LogKey::kHash);
    EXPECT_EQ(rule_json(rs.rules[1]).count("log_key"), 0u);  // the default is not written
  }
}

TEST(ConfigWriter, ACacheOfRuleTextsWritesTheSameTextAfterEveryKindOfChange) {
  RuleSet rs = load_ok(R"(rules:
  a: {limit: "gcra:rate=1/s,burst=1", key: client_ip}
  b: {limit: "token-bucket:rate=10/s,burst=20", key: "header:X-User", body: "no\n"}
  c: {limit: "fixed-window:limit=5,window=1m", key: [client_ip, path]}
)");
  RuleTextCache cache;
  EXPECT_EQ(to_yaml(rs, cache), to_yaml(rs));
  rs.rules[1].status = 503;  // a change in place
  EXPECT_EQ(to_yaml(rs, cache), to_yaml(rs));
  rs.rules.erase(rs.rules.begin());  // every rule after it moves
  EXPECT_EQ(to_yaml(rs, cache), to_yaml(rs));
  Rule d = rs.rules[0];
  d.name = "d";
  rs.rules.push_back(d);  // a copy under a new name
  EXPECT_EQ(to_yaml(rs, cache), to_yaml(rs));
  rs.rules.clear();
  EXPECT_EQ(to_yaml(rs, cache), to_yaml(rs));
  Loaded again = load_config_text(to_yaml(rs, cache), "written.yaml");
  EXPECT_TRUE(again.rules) << all_errors(again);
}

TEST(ParseRule, ReadsTheJsonOfTheAdminApi) {
  auto rule = parse_rule("per-user", R"({"limit": "token-bucket:rate=10/s,burst=20",
      "key": ["query:userId", "client_ip"], "action": "delay", "max_wait": "500ms",
      "status": 503, "body": "slow down\n", "on_missing_key": "deny"})");
  ASSERT_TRUE(rule) << rule.error();
  EXPECT_EQ(rule->name, "per-user");
  EXPECT_EQ(rule->limit.canonical, "token-bucket:rate=10/s,burst=20");
  EXPECT_EQ(rule->key, (std::vector<KeyPart>{{KeyPart::Kind::kQuery, "userId"},
                                             {KeyPart::Kind::kClientIp, ""}}));
  EXPECT_EQ(rule->action, Action::kDelay);
  EXPECT_EQ(rule->max_wait, 500 * core::kNanosPerMilli);
  EXPECT_EQ(rule->status, 503);
  EXPECT_EQ(rule->body, "slow down\n");
  EXPECT_EQ(rule->on_missing_key, OnMissingKey::kDeny);
  EXPECT_EQ(rule->line, 0);
}

TEST(ParseRule, ErrorsNameTheRuleAndTheField) {
  auto rule = parse_rule("per-user", R"({"limit": "tokn:rate=1/s", "key": "client_ip"})");
  ASSERT_FALSE(rule);
  EXPECT_EQ(rule.error().rfind("rule 'per-user': field 'limit': unknown algorithm 'tokn' "
                               "(accepted: token-bucket, ",
                               0),
            0u)
      << rule.error();
}

TEST(ParseRule, ReportsEveryProblem) {
  auto rule = parse_rule("r", R"({"limit": "gcra:rate=1/s,burst=1", "key": "ip", "status": 200,
                                  "colour": "red"})");
  ASSERT_FALSE(rule);
  for (const char* part : {"unknown field 'colour'", "unknown key kind 'ip'",
                           "field 'status': 200 is not an error status"}) {
    EXPECT_NE(rule.error().find(part), std::string::npos) << part << " not in " << rule.error();
  }
}

TEST(ParseRule, ReadsClientIpPrefixesAndWritesThemBack) {
  struct Row {
    const char* key;
    int v4, v6;
  };
  for (const Row& row :
       {Row{"client_ip/24", 24, 128}, Row{"client_ip/64", 32, 64}, Row{"client_ip/24/64", 24, 64},
        Row{"client_ip/32/20", 32, 20}, Row{"client_ip/0", 0, 128}, Row{"client_ip", 32, 128}}) {
    auto rule =
        parse_rule("r", std::string("{limit: 'gcra:rate=1/s,burst=1', key: ") + row.key + "}");
    ASSERT_TRUE(rule) << row.key << ": " << rule.error();
    EXPECT_EQ(rule->key[0].v4_prefix, row.v4) << row.key;
    EXPECT_EQ(rule->key[0].v6_prefix, row.v6) << row.key;
    auto again = parse_rule("r", rule_to_json(*rule));
    ASSERT_TRUE(again) << rule_to_json(*rule);
    EXPECT_EQ(again->key, rule->key) << row.key << " written as " << rule_to_json(*rule);
  }
}

TEST(ParseRule, RefusesAClientIpPrefixOutOfRange) {
  for (const char* bad : {"client_ip/129", "client_ip/33/64", "client_ip/24/129", "client_ip/",
                          "client_ip/x", "client_ip/024", "client_ip/-1", "client_ip/24/"}) {
    auto rule =
        parse_rule("r", std::string("{limit: 'gcra:rate=1/s,burst=1', key: '") + bad + "'}");
    ASSERT_FALSE(rule) << bad;
    EXPECT_NE(rule.error().find("client_ip/24/64"), std::string::npos) << rule.error();
  }
}

TEST(ParseRule, RefusesBadInput) {
  EXPECT_FALSE(parse_rule("r", "{\"limit\": "));
  EXPECT_NE(parse_rule("r", "{\"limit\": ").error().find("not valid YAML or JSON"),
            std::string::npos);
  EXPECT_NE(parse_rule("r", "[1, 2]").error().find("expected a mapping"), std::string::npos);
  EXPECT_NE(parse_rule("r", "").error().find("missing field 'limit'"), std::string::npos);
  EXPECT_NE(parse_rule("a b", R"({"limit": "gcra:rate=1/s,burst=1", "key": "client_ip"})")
                .error()
                .find("rule name 'a b' may hold only"),
            std::string::npos);
  EXPECT_NE(parse_rule("r", R"({"name": "s", "limit": "gcra:rate=1/s,burst=1", "key": "host"})")
                .error()
                .find("field 'name': 's' differs"),
            std::string::npos);
}

TEST(ParseRule, ReadsBackRuleToJsonOfEveryCorpusRule) {
  for (const auto& file : good_files()) {
    Loaded loaded = load_config_file(file.string());
    ASSERT_TRUE(loaded.rules) << all_errors(loaded);
    for (const Rule& r : loaded.rules->rules) {
      const std::string json = rule_to_json(r);
      auto again = parse_rule(r.name, json);
      ASSERT_TRUE(again) << json << "\n" << again.error();
      RuleSet a;
      RuleSet b;
      a.rules = {r};
      b.rules = {*again};
      expect_same(a, b);
    }
  }
}

TEST(RuleToJson, WritesTheDocumentedShape) {
  auto rule = parse_rule("per-user",
                         "limit: token-bucket:rate=10/s,burst=20\nkey: query:userId\n"
                         "action: delay\nmax_wait: 500ms\nbody: \"a\\\"b\\n\\u0001\"\n");
  ASSERT_TRUE(rule) << rule.error();
  EXPECT_EQ(
      rule_to_json(*rule),
      R"({"name":"per-user","limit":"token-bucket:rate=10/s,burst=20","key":["query:userId"],)"
      R"("action":"delay","max_wait":"500ms","status":429,"body":"a\"b\n\u0001",)"
      R"("on_missing_key":"skip"})");
}

TEST(Validate, FindsARouteWhoseRuleWasDeleted) {
  RuleSet rs = load_ok(R"(routes:
  - name: api
    respond: {status: 200}
    rules: [a, b]
rules:
  a: {limit: "gcra:rate=1/s,burst=1", key: client_ip}
  b: {limit: "gcra:rate=1/s,burst=1", key: client_ip}
)");
  EXPECT_TRUE(validate(rs, "f.yaml").empty());
  rs.rules.pop_back();
  const auto errors = validate(rs, "f.yaml");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].format(),
            "f.yaml:2: route 'api': field 'rules': no rule named 'b' (defined: a)");
}

TEST(Validate, ChecksRulesMadeByTheApi) {
  RuleSet rs;
  auto rule = parse_rule("r", R"({"limit": "fixed-window:limit=1,window=1s", "key": "host"})");
  ASSERT_TRUE(rule) << rule.error();
  rs.rules = {*rule, *rule};
  rs.rules[0].status = 200;
  rs.rules[1].action = Action::kDelay;
  const auto errors = validate(rs, "api");
  ASSERT_EQ(errors.size(), 4u) << errors[0].format();
  EXPECT_EQ(errors[0].format(), "api: duplicate rule name 'r'");
  std::string text;
  for (const auto& e : errors) text += e.format() + "\n";
  EXPECT_NE(text.find("api: rule 'r': field 'status': 200 is not an error status"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fixed-window decides only now"), std::string::npos) << text;
  EXPECT_NE(text.find("'delay' needs max_wait"), std::string::npos) << text;
}

TEST(Endpoint, ParsesAndFormatsEveryForm) {
  for (const char* text : {"127.0.0.1:8080", "[::1]:8080", ":8080", "localhost:80", "[::]:1"}) {
    auto ep = parse_endpoint(text);
    ASSERT_TRUE(ep) << text << ": " << ep.error();
    EXPECT_EQ(format_endpoint(*ep), text);
  }
  EXPECT_EQ(parse_endpoint("[::1]:8080")->host, "::1");
  EXPECT_EQ(parse_endpoint(":8080")->host, "");
  for (const char* text : {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "::1:80", "[::1]80",
                           "[::1:80", "1.2.3:80", "-a.com:80", "a..b:80", "host:+80"}) {
    EXPECT_FALSE(parse_endpoint(text)) << text;
  }
}

TEST(Cidr, ParsesNetworksAndBareAddresses) {
  auto v4 = parse_cidr("192.168.0.0/16");
  ASSERT_TRUE(v4) << v4.error();
  EXPECT_EQ(v4->prefix, 16);
  EXPECT_EQ(v4->bytes[0], 192);
  EXPECT_EQ(v4->bytes[1], 168);
  EXPECT_EQ(parse_cidr("10.1.2.3")->prefix, 32);
  EXPECT_EQ(parse_cidr("::1")->prefix, 128);
  EXPECT_TRUE(parse_cidr("0.0.0.0/0"));
  EXPECT_TRUE(parse_cidr("fd00::/8")->v6);
  EXPECT_TRUE(parse_cidr("10.0.0.128/25"));
  EXPECT_NE(parse_cidr("10.0.0.129/25").error().find("did you mean 10.0.0.128/25?"),
            std::string::npos);
  EXPECT_NE(parse_cidr("fd00::1/8").error().find("did you mean fd00::/8?"), std::string::npos);
  for (const char* text : {"10.0.0.0/", "10.0.0.0/x", "10.0.0.0/33", "::/129", "10.0.0", "", "a"}) {
    EXPECT_FALSE(parse_cidr(text)) << text;
  }
}

}  // namespace
}  // namespace sluice::config
