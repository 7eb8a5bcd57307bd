// A buffered request body: memory as the bytes come, then an unlinked temporary file, read back
// byte for byte; and what happens when the file cannot be made.
#include "body_buffer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace sluice::server::gateway {
namespace {

namespace fs = std::filesystem;

// A fresh empty directory for one test's temporary files.
class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "sluice-body-test-XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path_), {}));
  }

 private:
  std::string path_;
};

// Feeds `data` to `body` as the session does: into memory while it has room, then to the file.
void feed(BodyBuffer& body, std::string_view data, std::size_t piece) {
  while (!data.empty()) {
    const auto room = body.memory_room(std::min(piece, data.size()));
    if (!room.empty()) {
      data.copy(room.data(), room.size());
      body.commit(room.size());
      data.remove_prefix(room.size());
      continue;
    }
    const std::size_t n = std::min(piece, data.size());
    if (!body.spill(data.substr(0, n))) return;
    data.remove_prefix(n);
  }
}

// Everything `body` holds, in order: memory, file, tail.
std::string contents(const BodyBuffer& body) {
  std::string out(body.memory());
  std::string piece(1000, '\0');
  for (std::uint64_t at = 0; at < body.file_size();) {
    const auto n = body.read_file(at, piece.data(), piece.size());
    if (n <= 0) return out + "<read failed>";
    out.append(piece.data(), static_cast<std::size_t>(n));
    at += static_cast<std::uint64_t>(n);
  }
  return out + std::string(body.tail());
}

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 % 251);
  return s;
}

TEST(BodyBuffer, ABodyWithinMemoryNeverTouchesTheFile) {
  TempDir dir;
  BodyBuffer body;
  body.start(65536, 5000, dir.path());
  const std::string data = pattern(5000);
  feed(body, data, 16384);
  EXPECT_EQ(body.size(), 5000u);
  EXPECT_EQ(body.memory().size(), 5000u);
  EXPECT_EQ(body.file_size(), 0u);
  EXPECT_EQ(contents(body), data);
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(BodyBuffer, ALongerBodyGoesOnToAFileWithNoNameAndComesBackIntact) {
  TempDir dir;
  BodyBuffer body;
  body.start(16384, std::nullopt, dir.path());  // chunked: no length known
  const std::string data = pattern(1'000'003);
  feed(body, data, 16384);
  EXPECT_EQ(body.size(), 1'000'003u);
  EXPECT_EQ(body.memory().size(), 16384u);
  EXPECT_EQ(body.file_size(), 1'000'003u - 16384u);
  EXPECT_TRUE(body.tail().empty());
  EXPECT_EQ(contents(body), data);
  // The file has no name in the directory: nothing to clean up if sluice is killed.
  EXPECT_EQ(dir.entries(), 0u);
  body.reset();
  EXPECT_EQ(body.size(), 0u);
  EXPECT_EQ(body.memory().size(), 0u);
}

TEST(BodyBuffer, NoMemoryPutsTheWholeBodyInTheFile) {
  TempDir dir;
  BodyBuffer body;
  body.start(0, 3000, dir.path());
  const std::string data = pattern(3000);
  feed(body, data, 1024);
  EXPECT_EQ(body.memory().size(), 0u);
  EXPECT_EQ(body.file_size(), 3000u);
  EXPECT_EQ(contents(body), data);
}

TEST(BodyBuffer, AFileThatCannotBeMadeKeepsThePieceAsTheTailAndSaysWhy) {
  BodyBuffer body;
  body.start(100, std::nullopt, "/nonexistent/sluice-body-dir");
  const std::string data = pattern(150);
  feed(body, data, 30);
  // 100 bytes in memory, then the first piece for the file failed and was kept.
  EXPECT_EQ(body.memory().size(), 100u);
  EXPECT_EQ(body.file_size(), 0u);
  EXPECT_EQ(body.tail(), data.substr(100, 30));
  EXPECT_EQ(body.size(), 130u);
  EXPECT_NE(body.error().find("/nonexistent/sluice-body-dir"), std::string::npos) << body.error();
  EXPECT_EQ(contents(body), data.substr(0, 130));
}

TEST(BodyBuffer, MemoryGrowsWithTheBytesNotWithTheAnnouncedLength) {
  BodyBuffer body;
  body.start(65536, std::uint64_t{1} << 30, "");  // 1 GiB announced, over the memory limit
  const auto room = body.memory_room(65536);
  EXPECT_EQ(room.size(), 16384u);  // the first allocation is one piece, not 64 KiB
  body.commit(16384);
  EXPECT_EQ(body.memory_room(65536).size(), 16384u);  // doubled to 32 KiB
  body.commit(16384);
  EXPECT_EQ(body.memory_room(65536).size(), 32768u);  // 64 KiB, the limit
  body.commit(32768);
  EXPECT_TRUE(body.memory_room(65536).empty());
}

}  // namespace
}  // namespace sluice::server::gateway
