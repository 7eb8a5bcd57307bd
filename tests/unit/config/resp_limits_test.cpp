// The resp section's limits on one client (AUTH failures, a transaction's queue): their
// documented defaults, their checks with FILE:LINE errors, write-back, and check-config's
// warning on a short password (docs/resp.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config_errors.hpp"
#include "sluice/config/loader.hpp"

namespace sluice::config {
namespace {

using test::errors_of;

RespSettings resp_of(const std::string& yaml) {
  Loaded loaded = load_config_text(yaml, "t.yaml");
  EXPECT_TRUE(loaded.errors.empty()) << errors_of(loaded);
  if (!loaded.rules || !loaded.rules->resp) return RespSettings{};
  return *loaded.rules->resp;
}

TEST(RespLimits, DefaultsAreTheDocumentedOnes) {
  const RespSettings r = resp_of("resp:\n  listen: 127.0.0.1:6390\n");
  EXPECT_EQ(r.max_auth_failures, 10);
  EXPECT_EQ(r.auth_failure_burst, 100);
  EXPECT_EQ(r.auth_failure_rate, (core::Rate{10, core::kNanosPerSecond}));
  EXPECT_EQ(r.max_queued_commands, 10000);
  EXPECT_EQ(r.max_queued_bytes, std::size_t{16} << 20);
  // The engine's inline limit: GCRA lets burst + 1 through at once.
  EXPECT_EQ(r.auth_failure_limit(), "gcra:rate=10/s,burst=99");
}

TEST(RespLimits, ReadsEachFieldAndWritesItBack) {
  const std::string yaml =
      "resp:\n  max_auth_failures: 3\n  auth_failure_burst: 1\n  auth_failure_rate: 30/m\n"
      "  max_queued_commands: 50\n  max_queued_bytes: 2MiB\n";
  const RespSettings r = resp_of(yaml);
  EXPECT_EQ(r.max_auth_failures, 3);
  EXPECT_EQ(r.auth_failure_burst, 1);
  EXPECT_EQ(r.auth_failure_rate, (core::Rate{30, core::kNanosPerMinute}));
  EXPECT_EQ(r.auth_failure_limit(), "gcra:rate=30/m,burst=0");
  EXPECT_EQ(r.max_queued_commands, 50);
  EXPECT_EQ(r.max_queued_bytes, std::size_t{2} << 20);
  Loaded loaded = load_config_text(yaml, "t.yaml");
  ASSERT_TRUE(loaded.rules);
  const RespSettings back = resp_of(to_yaml(*loaded.rules));
  EXPECT_EQ(back.max_auth_failures, 3);
  EXPECT_EQ(back.auth_failure_burst, 1);
  EXPECT_EQ(back.auth_failure_rate, r.auth_failure_rate);
  EXPECT_EQ(back.max_queued_commands, 50);
  EXPECT_EQ(back.max_queued_bytes, r.max_queued_bytes);
}

TEST(RespLimits, EachBadValueIsAnErrorAtItsLine) {
  Loaded loaded = load_config_text(
      "resp:\n  max_auth_failures: 0\n  auth_failure_burst: -1\n  auth_failure_rate: fast\n"
      "  max_queued_commands: 0\n  max_queued_bytes: 100B\n",
      "t.yaml");
  ASSERT_EQ(loaded.errors.size(), 5u) << errors_of(loaded);
  const std::string all = errors_of(loaded);
  EXPECT_NE(all.find("t.yaml:2: field 'resp.max_auth_failures'"), std::string::npos) << all;
  EXPECT_NE(all.find("t.yaml:3: field 'resp.auth_failure_burst'"), std::string::npos) << all;
  EXPECT_NE(all.find("t.yaml:4: field 'resp.auth_failure_rate': rate 'fast'"), std::string::npos)
      << all;
  EXPECT_NE(all.find("t.yaml:5: field 'resp.max_queued_commands'"), std::string::npos) << all;
  EXPECT_NE(all.find("t.yaml:6: field 'resp.max_queued_bytes': 100 is out of range (accepted: "
                     "1KiB to 1GiB; the default is 16MiB)"),
            std::string::npos)
      << all;
}

// A password file of `bytes` bytes, and the config naming it at line 3.
std::string config_with_password(std::size_t bytes) {
  const auto path =
      std::filesystem::temp_directory_path() / ("sluice-resp-secret-" + std::to_string(::getpid()));
  std::ofstream(path) << std::string(bytes, 'x') << "\n";
  return "resp:\n  listen: 127.0.0.1:6390\n  password_file: " + path.string() + "\n";
}

TEST(RespLimits, APasswordUnder16BytesLoadsWithAWarningAtItsLine) {
  Loaded loaded = load_config_text(config_with_password(15), "t.yaml");
  ASSERT_TRUE(loaded.rules) << errors_of(loaded);
  const auto w = warnings(*loaded.rules, "t.yaml");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].format(),
            "t.yaml:3: warning: field 'resp.password_file': the password is 15 bytes; use at "
            "least 16 random bytes (a short one can be guessed, even at resp.auth_failure_rate)");
  loaded = load_config_text(config_with_password(16), "t.yaml");
  ASSERT_TRUE(loaded.rules) << errors_of(loaded);
  EXPECT_TRUE(warnings(*loaded.rules, "t.yaml").empty());
  ::setenv("SLUICE_TEST_RESP_PASSWORD", "short", 1);
  loaded = load_config_text("resp:\n  password_env: SLUICE_TEST_RESP_PASSWORD\n", "t.yaml");
  ASSERT_TRUE(loaded.rules) << errors_of(loaded);
  ASSERT_EQ(warnings(*loaded.rules, "t.yaml").size(), 1u);
  EXPECT_EQ(warnings(*loaded.rules, "t.yaml")[0].line, 2);
}

}  // namespace
}  // namespace sluice::config
