// BodyBuffer (body_buffer.hpp).
#include "body_buffer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>

#include "sluice/log/log.hpp"

namespace sluice::server::gateway {

namespace {

constexpr std::size_t kFirstPiece = 16u << 10;  // a chunked body's first allocation

std::string system_temp_dir() {
  std::error_code ec;
  const auto dir = std::filesystem::temp_directory_path(ec);
  return ec ? std::string("/tmp") : dir.string();
}

// A file nobody else can open: O_TMPFILE has no name at all; where the file system cannot
// make one, a named file is made with mkostemp and its name removed at once.
int open_unlinked(const std::string& dir, std::string& error) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
    std::string path = dir + "/sluice-body-XXXXXX";
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0) {
      ::unlink(path.c_str());
      return fd;
    }
  }
  error = "cannot make a temporary file in " + dir + ": " + std::strerror(errno);
  return -1;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

void BodyBuffer::start(std::size_t memory, std::optional<std::uint64_t> expected,
                       std::string_view temp_dir) {
  reset();
  limit_ = memory;
  // A body known to fit is allocated once; another starts small and doubles.
  first_ = expected && *expected <= memory ? static_cast<std::size_t>(*expected)
                                           : std::min(memory, kFirstPiece);
  temp_dir_.assign(temp_dir);
}

std::span<char> BodyBuffer::memory_room(std::size_t want) {
  if (used_ == capacity_ && capacity_ < limit_) {
    // Grown as the bytes come, so a client that announces much and sends little holds little.
    const std::size_t grown = std::min(limit_, std::max(first_, capacity_ * 2));
    auto bigger = std::make_unique_for_overwrite<char[]>(std::max<std::size_t>(grown, 1));
    if (used_ > 0) std::memcpy(bigger.get(), memory_.get(), used_);
    memory_ = std::move(bigger);
    capacity_ = grown;
  }
  return {memory_.get() + used_, std::min(want, capacity_ - used_)};
}

bool BodyBuffer::spill(std::string_view data) {
  if (!tail_.empty() || !error_.empty()) {
    tail_.append(data);
    return false;
  }
  if (fd_ < 0) {
    fd_ = open_unlinked(temp_dir_.empty() ? system_temp_dir() : temp_dir_, error_);
  }
  if (fd_ >= 0 && write_all(fd_, data)) {
    file_size_ += data.size();
    return true;
  }
  if (error_.empty())
    error_ = std::string("cannot write a temporary file: ") + std::strerror(errno);
  tail_.assign(data);
  return false;
}

std::ptrdiff_t BodyBuffer::read_file(std::uint64_t offset, char* out, std::size_t n) const {
  for (;;) {
    const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    return got;
  }
}

void BodyBuffer::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  file_size_ = 0;
  memory_.reset();
  capacity_ = used_ = limit_ = first_ = 0;
  tail_.clear();
  error_.clear();
}

void warn_spill_failed(const BodyBuffer& body, core::Nanos now_ns) {
  static std::atomic<std::int64_t> last{std::numeric_limits<std::int64_t>::min() / 2};
  static std::atomic<std::uint64_t> unsaid{0};
  const std::int64_t now = now_ns / core::kNanosPerSecond;
  std::int64_t then = last.load(std::memory_order_relaxed);
  if (now - then < 10 || !last.compare_exchange_strong(then, now, std::memory_order_relaxed)) {
    unsaid.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t passed = unsaid.exchange(0, std::memory_order_relaxed);
  log::warn(fmt::format(
      "sluice: gateway: a request body over http.body_buffer is streamed, not buffered: {} ({} "
      "more since the last line)",
      body.error(), passed));
}

}  // namespace sluice::server::gateway
