// The redis section as it is deployed (docs/configuration.md, "Redis"): a url or sentinels, the
// database, AUTH with its secret from a file or the environment, TLS; their documented
// defaults, each wrong value or combination as FILE:LINE, and write-back that never writes a
// secret.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config_errors.hpp"
#include "sluice/config/loader.hpp"

namespace sluice::config {
namespace {

namespace fs = std::filesystem;

using test::errors_of;

RedisSettings redis_of(const std::string& yaml) {
  Loaded loaded = load_config_text(yaml, "t.yaml");
  EXPECT_TRUE(loaded.errors.empty()) << errors_of(loaded);
  if (!loaded.rules || !loaded.rules->redis) return RedisSettings{};
  return *loaded.rules->redis;
}

// A file holding `text` in a fresh temporary folder, removed at the end of the test.
class TempFiles {
 public:
  TempFiles()
      : dir_(fs::temp_directory_path() / ("sluice-redis-cfg-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~TempFiles() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::string dir() const { return dir_.string(); }

 private:
  fs::path dir_;
};

TEST(RedisSettings, DefaultsAreTheDocumentedOnes) {
  const RedisSettings r = redis_of("redis:\n  url: redis://127.0.0.1:6379\n");
  auto url = r.store_url();
  ASSERT_TRUE(url) << url.error();
  EXPECT_EQ(url->db, 0);
  EXPECT_EQ(url->auth, (proto::resp::StoreAuth{}));
  EXPECT_FALSE(url->tls.enabled);
  EXPECT_FALSE(url->sentinel);
  EXPECT_EQ(r.timeout, 50 * core::kNanosPerMilli);
  EXPECT_EQ(r.cache_denials, core::kNanosPerSecond);
}

TEST(RedisSettings, PasswordFromAFileWithItsNewlineTrimmedAndAUserAndADb) {
  TempFiles t;
  const std::string secret = t.file("pass", "s3cret-redis-password\n");
  const RedisSettings r = redis_of(
      "redis:\n  url: redis://10.0.0.1:6380\n  db: 3\n  user: sluice\n"
      "  password_file: " +
      secret + "\n");
  auto url = r.store_url();
  ASSERT_TRUE(url) << url.error();
  EXPECT_EQ(url->auth.user, "sluice");
  EXPECT_EQ(url->auth.password, "s3cret-redis-password");
  EXPECT_EQ(url->db, 3);
  EXPECT_EQ(r.auth.line, 5);
}

TEST(RedisSettings, PasswordFromTheEnvironmentAndTheUserFromTheUrl) {
  ::setenv("SLUICE_TEST_REDIS_PASSWORD", "from-the-environment", 1);
  const RedisSettings r = redis_of(
      "redis:\n  url: rediss://app@10.0.0.1:6380/2\n  password_env: SLUICE_TEST_REDIS_PASSWORD\n");
  auto url = r.store_url();
  ASSERT_TRUE(url) << url.error();
  EXPECT_EQ(url->auth.user, "app");
  EXPECT_EQ(url->auth.password, "from-the-environment");
  EXPECT_EQ(url->db, 2);
  EXPECT_TRUE(url->tls.enabled);
  EXPECT_TRUE(url->tls.verify);
}

TEST(RedisSettings, SentinelsAndMasterWithTheirOwnAuth) {
  ::setenv("SLUICE_TEST_SENTINEL_PASSWORD", "sentinel-secret", 1);
  const RedisSettings r = redis_of(
      "redis:\n  sentinels: [10.0.0.1, '10.0.0.2:5000']\n  master: mymaster\n  db: 1\n"
      "  sentinel_password_env: SLUICE_TEST_SENTINEL_PASSWORD\n");
  auto url = r.store_url();
  ASSERT_TRUE(url) << url.error();
  EXPECT_TRUE(url->sentinel);
  ASSERT_EQ(url->seeds.size(), 2u);
  EXPECT_EQ(url->seeds[0], (Endpoint{"10.0.0.1", 26379}));
  EXPECT_EQ(url->seeds[1], (Endpoint{"10.0.0.2", 5000}));
  EXPECT_EQ(url->master, "mymaster");
  EXPECT_EQ(url->db, 1);
  EXPECT_EQ(url->sentinel_auth.password, "sentinel-secret");
  EXPECT_EQ(url->auth.password, "");
}

TEST(RedisSettings, TlsFilesAreReadAtLoadAndFoldedIntoTheUrl) {
  TempFiles t;
  const std::string ca = t.file("ca.crt", "-----BEGIN CERTIFICATE-----\n");
  const std::string cert = t.file("c.crt", "-----BEGIN CERTIFICATE-----\n");
  const std::string key = t.file("c.key", "-----BEGIN PRIVATE KEY-----\n");
  const RedisSettings r =
      redis_of("redis:\n  url: redis://10.0.0.1:6380\n  tls:\n    ca_file: " + ca +
               "\n    cert_file: " + cert + "\n    key_file: " + key +
               "\n    server_name: redis.internal\n");
  auto url = r.store_url();
  ASSERT_TRUE(url) << url.error();
  EXPECT_TRUE(url->tls.enabled);  // a tls section turns it on for redis:// too
  EXPECT_TRUE(url->tls.verify);
  EXPECT_EQ(url->tls.ca_file, ca);
  EXPECT_EQ(url->tls.cert_file, cert);
  EXPECT_EQ(url->tls.key_file, key);
  EXPECT_EQ(url->tls.server_name, "redis.internal");
  const RedisSettings off =
      redis_of("redis:\n  url: rediss://10.0.0.1:6380\n  tls: {verify: false}\n");
  EXPECT_FALSE(off.store_url()->tls.verify);
}

TEST(RedisSettings, WriteBackNamesWhereTheSecretIsButNeverTheSecret) {
  TempFiles t;
  const std::string secret = t.file("pass", "never-written-back\n");
  const std::string yaml =
      "redis:\n  sentinels: [127.0.0.1:26379]\n  master: cache\n  db: 4\n"
      "  user: app\n  password_file: " +
      secret + "\n  tls: {verify: false, server_name: redis.internal}\n";
  Loaded loaded = load_config_text(yaml, "t.yaml");
  ASSERT_TRUE(loaded.rules) << errors_of(loaded);
  const std::string written = to_yaml(*loaded.rules);
  EXPECT_EQ(written.find("never-written-back"), std::string::npos) << written;
  const RedisSettings back = redis_of(written);
  auto a = loaded.rules->redis->store_url();
  auto b = back.store_url();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(b->auth.password, "never-written-back");
  EXPECT_EQ(back.auth.password_file, secret);
}

// Each bad config gives exactly the error `want` at its line.
void expect_error(const std::string& yaml, const std::string& want) {
  Loaded loaded = load_config_text(yaml, "t.yaml");
  const std::string all = errors_of(loaded);
  EXPECT_NE(all.find(want), std::string::npos) << "want: " << want << "\ngot:\n" << all;
  EXPECT_FALSE(loaded.rules);
}

TEST(RedisSettings, EachWrongValueOrCombinationIsAnErrorAtItsLine) {
  expect_error("redis:\n  url: redis-cluster://a:7000,b:7000\n  db: 2\n",
               "t.yaml:3: field 'redis.db': Redis Cluster has only database 0");
  expect_error("redis:\n  url: redis-cluster://a:7000/2\n",
               "t.yaml:2: field 'redis.url': Redis Cluster has only database 0");
  expect_error("redis:\n  url: redis://a\n  db: -1\n",
               "t.yaml:3: field 'redis.db': expected a whole number, got '-1'");
  expect_error(
      "redis:\n  url: redis://user:pw@a\n",
      "t.yaml:2: field 'redis.url': a password in the Redis URL 'redis://...' would sit in "
      "the config's text");
  expect_error("redis:\n  url: redis://a\n  user: app\n",
               "t.yaml:3: field 'redis.user': AUTH with an ACL user needs its password too");
  expect_error("redis:\n  url: redis://app@a\n",
               "t.yaml:2: field 'redis.url': AUTH with an ACL user needs its password too");
  expect_error("redis:\n  url: redis://a\n  password_file: /nonexistent/redis-pass\n",
               "t.yaml:3: field 'redis.password_file': cannot read '/nonexistent/redis-pass'");
  expect_error("redis:\n  url: redis://a\n  password_env: SLUICE_TEST_UNSET_VARIABLE\n",
               "t.yaml:3: field 'redis.password_env': the environment variable "
               "'SLUICE_TEST_UNSET_VARIABLE' is not set");
  expect_error("redis:\n  url: redis://a\n  password_env: 'bad name'\n",
               "t.yaml:3: field 'redis.password_env': 'bad name' is not an environment variable");
  ::setenv("SLUICE_TEST_REDIS_PASSWORD", "x", 1);
  expect_error(
      "redis:\n  url: redis://a\n  password_file: /etc/hostname\n"
      "  password_env: SLUICE_TEST_REDIS_PASSWORD\n",
      "t.yaml:4: field 'redis.password_env': give password_file or password_env, not "
      "both");
  expect_error("redis:\n  url: redis://a\n  sentinels: [b]\n  master: m\n",
               "t.yaml:3: field 'redis.sentinels': give redis.url or redis.sentinels");
  expect_error("redis:\n  sentinels: [b]\n",
               "t.yaml:2: field 'redis.sentinels': the sentinels need the name of the master");
  expect_error("redis:\n  url: redis://a\n  master: m\n",
               "t.yaml:3: field 'redis.master': applies to Sentinel discovery");
  expect_error("redis:\n  sentinels: ['b:x']\n  master: m\n",
               "t.yaml:2: field 'redis.sentinels': bad port 'x' in sentinel 'b:x'");
  expect_error("redis:\n  sentinels: [b]\n  master: 'my master'\n",
               "t.yaml:3: field 'redis.master': the master's name 'my master' may hold no spaces");
  expect_error("redis:\n  url: redis://a\n  sentinel_password_env: SLUICE_TEST_REDIS_PASSWORD\n",
               "t.yaml:3: field 'redis.sentinel_password_env': applies only to Sentinel");
  expect_error("redis:\n  url: redis://a\n  tls:\n    ca_file: /nonexistent/ca.crt\n",
               "t.yaml:4: field 'redis.tls.ca_file': cannot read '/nonexistent/ca.crt'");
  expect_error("redis:\n  url: redis://a\n  tls:\n    ca_dir: /nonexistent\n",
               "t.yaml:4: field 'redis.tls.ca_dir': '/nonexistent' is not a directory");
  expect_error("redis:\n  url: redis://a\n  tls:\n    cert_file: /etc/hostname\n",
               "t.yaml:4: field 'redis.tls.cert_file': a client certificate needs its key too");
  expect_error("redis:\n  url: redis://a\n  tls:\n    key_file: /etc/hostname\n",
               "t.yaml:4: field 'redis.tls.key_file': a client key needs its certificate too");
  expect_error("redis:\n  url: redis://a\n  tls:\n    verify: false\n    ca_file: /etc/hostname\n",
               "t.yaml:5: field 'redis.tls.ca_file': verify: false checks no certificate");
  expect_error("redis:\n  url: redis://a\n  tls:\n    verify: maybe\n",
               "t.yaml:4: field 'redis.tls.verify': expected true or false");
  expect_error("redis:\n  url: redis://a\n  tls:\n    server_name: 'a b'\n",
               "t.yaml:4: field 'redis.tls.server_name': expected a host name");
  expect_error("redis:\n  url: redis://a\n  tls:\n    sni: x\n",
               "t.yaml:4: unknown field 'redis.tls.sni'");
}

TEST(RedisSettings, RulesKeptInRedisAcceptSentinelsAsTheStore) {
  Loaded loaded = load_config_text(
      "redis:\n  sentinels: [127.0.0.1:26379]\n  master: m\n  storage: redis\n"
      "rules:\n  r:\n    limit: token-bucket:rate=10/s,burst=10\n    key: client_ip\n",
      "t.yaml");
  EXPECT_TRUE(loaded.rules) << errors_of(loaded);
}

TEST(RedisSettings, CacheDenialsIsADurationAndZeroTurnsItOff) {
  EXPECT_EQ(redis_of("redis:\n  url: redis://a\n  cache_denials: 250ms\n").cache_denials,
            250 * core::kNanosPerMilli);
  EXPECT_EQ(redis_of("redis:\n  url: redis://a\n  cache_denials: 0s\n").cache_denials, 0);
  expect_error("redis:\n  url: redis://a\n  cache_denials: yes\n",
               "t.yaml:3: field 'redis.cache_denials': ");
}

}  // namespace
}  // namespace sluice::config
