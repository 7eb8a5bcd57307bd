// Bounded config reading: the size cap is enforced while reading (files, pipes, devices), and
// YAML that would cost far more than its size (deep nesting, aliases that multiply) is refused
// at its line instead of being expanded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sluice/config/loader.hpp"

namespace sluice::config {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/sluice-config-size-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path file(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const std::string kSmall =
    "admin: 127.0.0.1:9090\n"
    "rules:\n"
    "  a: {limit: \"gcra:rate=1/s,burst=1\", key: client_ip}\n";

std::string first_error(const Loaded& loaded) {
  return loaded.errors.empty() ? std::string("(no error)") : loaded.errors.front().format();
}

TEST(ConfigSize, AFileOfExactlyTheCapLoadsAndOneByteMoreIsRefusedNamingTheCap) {
  TempDir dir;
  std::string text = kSmall;
  text += "# " + std::string(4096 - text.size() - 3, 'x') + "\n";
  ASSERT_EQ(text.size(), 4096u);
  const auto at_cap = dir.file("at_cap.yaml", text);
  EXPECT_TRUE(load_config_file(at_cap.string(), {}, 4096).rules.has_value());

  const auto over = dir.file("over.yaml", text + "\n");
  const Loaded refused = load_config_file(over.string(), {}, 4096);
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_EQ(first_error(refused), over.string() +
                                      ": is larger than the config size limit of 4KiB "
                                      "(--max-config-size); nothing past it was read");
}

TEST(ConfigSize, TheDefaultCapIs16MiB) {
  TempDir dir;
  const auto big = dir.file("big.yaml", kSmall + "# " + std::string(16u << 20, 'x') + "\n");
  EXPECT_EQ(first_error(load_config_file(big.string())),
            big.string() +
                ": is larger than the config size limit of 16MiB "
                "(--max-config-size); nothing past it was read");
}

TEST(ConfigSize, DevZeroIsRefusedAtOnceInsteadOfReadUntilMemoryRunsOut) {
  const auto start = std::chrono::steady_clock::now();
  const Loaded loaded = load_config_file("/dev/zero");
  EXPECT_EQ(first_error(loaded),
            "/dev/zero: is a character device; a config must be a regular file of at most "
            "16MiB (--max-config-size)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(ConfigSize, AFifoWithNoWriterIsRefusedWithoutWaitingForOne) {
  TempDir dir;
  const fs::path fifo = dir.path() / "config.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Loaded loaded = load_config_file(fifo.string());
  EXPECT_EQ(first_error(loaded), fifo.string() +
                                     ": is a FIFO (named pipe); a config must be a regular "
                                     "file of at most 16MiB (--max-config-size)");
}

TEST(ConfigSize, APasswordFileThatIsAFifoIsRefusedAtItsLineWithoutWaiting) {
  TempDir dir;
  const fs::path fifo = dir.path() / "password.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Loaded loaded = load_config_text(
      "resp:\n  listen: 127.0.0.1:6390\n  password_file: " + fifo.string() + "\n", "resp.yaml");
  EXPECT_EQ(first_error(loaded), "resp.yaml:3: field 'resp.password_file': cannot read '" +
                                     fifo.string() +
                                     "': is a FIFO (named pipe); a password file must be a "
                                     "regular file of at most 4KiB");
}

TEST(ConfigSize, ADirectoryAndAMissingFileAreRefusedByName) {
  TempDir dir;
  EXPECT_EQ(first_error(load_config_file(dir.path().string())),
            dir.path().string() +
                ": is a directory; a config must be a regular file of at most 16MiB "
                "(--max-config-size)");
  EXPECT_EQ(first_error(load_config_file((dir.path() / "none.yaml").string())),
            (dir.path() / "none.yaml").string() + ": cannot read: No such file or directory");
}

TEST(ConfigShape, NestingDeeperThan32LevelsIsRefusedAtItsLine) {
  std::string deep = kSmall + "x: ";
  for (int i = 0; i < 40; ++i) deep += "[";
  for (int i = 0; i < 40; ++i) deep += "]";
  const Loaded loaded = load_config_text(deep + "\n", "deep.yaml");
  EXPECT_EQ(first_error(loaded),
            "deep.yaml:4: nested deeper than 32 levels; a config needs far "
            "fewer");
  // A million brackets are refused just as fast: the parser never recurses that far.
  const Loaded huge = load_config_text("x: " + std::string(1'000'000, '['), "huge.yaml");
  EXPECT_EQ(first_error(huge),
            "huge.yaml:1: nested deeper than 32 levels; a config needs far "
            "fewer");
}

TEST(ConfigShape, AliasesThatMultiplyPastTheCapAreRefusedAtTheAliasThatCrossesIt) {
  // Billion laughs: each level lists the previous one 9 times; x7 would be 9^7 = 4.8M strings.
  std::string yaml = kSmall + "x0: &a0 \"lol\"\n";
  for (int i = 1; i <= 7; ++i) {
    yaml += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) yaml += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
    yaml += "]\n";
  }
  const Loaded loaded = load_config_text(yaml, "laughs.yaml", {}, 1u << 20);
  ASSERT_FALSE(loaded.errors.empty());
  // x5 stands for 9^5 strings (236k nodes and bytes); x6's fourth alias of it crosses 1 MiB.
  EXPECT_EQ(loaded.errors.front().line, 10);
  EXPECT_NE(loaded.errors.front().message.find("aliases expand this config past its size limit"),
            std::string::npos)
      << first_error(loaded);
}

TEST(ConfigShape, AnAliasInsideWhatItNamesIsRefused) {
  const Loaded loaded = load_config_text(kSmall + "x: &a [*a]\n", "loop.yaml");
  EXPECT_EQ(first_error(loaded),
            "loop.yaml:4: an alias names the collection it is part of; a "
            "config cannot contain itself");
}

TEST(ConfigShape, AliasesWithinTheCapReadAsIfWrittenOut) {
  const Loaded loaded = load_config_text(
      "admin: 127.0.0.1:9090\n"
      "rules:\n"
      "  a: &rule {limit: \"gcra:rate=1/s,burst=1\", key: [client_ip, &h \"header:X-User\"]}\n"
      "  b: *rule\n"
      "  c: {limit: \"fixed-window:limit=5,window=1m\", key: *h}\n",
      "aliases.yaml");
  ASSERT_TRUE(loaded.rules.has_value()) << first_error(loaded);
  const RuleSet& rs = *loaded.rules;
  ASSERT_EQ(rs.rules.size(), 3u);
  EXPECT_EQ(rs.rules[1].limit_text, "gcra:rate=1/s,burst=1");
  EXPECT_EQ(rs.rules[1].key, rs.rules[0].key);
  ASSERT_EQ(rs.rules[2].key.size(), 1u);
  EXPECT_EQ(rs.rules[2].key[0].name, "X-User");
}

}  // namespace
}  // namespace sluice::config
