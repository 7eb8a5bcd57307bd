// Reading a config file under a size cap (sluice/config/loader.hpp). The cap is checked while
// reading, never by a stat() before it: a file that grows between the two, /proc files that
// report size 0, and devices that never end (/dev/zero) are all stopped at cap + 1 bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "sluice/config/loader.hpp"
#include "sluice/core/byte_size.hpp"

namespace sluice::config {
namespace {

// What a non-regular file is, for the message that refuses it.
const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string size_limit_text(std::size_t max_size) {
  return core::format_bytes(max_size) + " (--max-config-size)";
}

core::Expected<std::string> read_config_file(const std::string& path, std::size_t max_size,
                                             std::string_view what) {
  auto fail = [&](const std::string& why) { return core::make_error(why); };
  const std::string kind = what.empty() ? "a config" : std::string(what);
  const std::string cap = what.empty() ? size_limit_text(max_size) : core::format_bytes(max_size);
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever, before fstat()
  // could tell us it is one. A regular file ignores the flag.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return fail(std::string("cannot read: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail(std::string("cannot read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    // A pipe or a device can stall forever or never end; a config is a file of bounded size.
    return fail(std::string("is ") + kind_of(st.st_mode) + "; " + kind +
                " must be a regular file of at most " + cap);
  }
  std::string text;
  // The size is a hint for the first allocation only; the loop below enforces the cap.
  if (st.st_size > 0) {
    text.reserve(std::min(static_cast<std::size_t>(st.st_size), max_size) + 1);
  }
  char buf[1 << 16];
  while (true) {
    const std::size_t room = max_size + 1 - text.size();  // read at most one byte past the cap
    const ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, room));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_size) {
      return fail(
          what.empty()
              ? "is larger than the config size limit of " + cap + "; nothing past it was read"
              : "is larger than " + cap + ", the limit for " + kind + "; nothing past it was read");
    }
  }
  return text;
}

}  // namespace sluice::config
