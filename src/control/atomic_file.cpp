// write_file_atomically (atomic_file.hpp): POSIX temp file + fsync + rename + directory fsync.
#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace sluice::control {
namespace {

core::Error failure(std::string_view step, const std::string& path, int err) {
  return core::make_error(std::string(step) + " " + path + ": " + std::strerror(err));
}

// The real file behind `path`, so that writing through a symlink replaces its target.
std::string resolve(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> real(realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : path;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

core::Expected<bool> write_file_atomically(const std::string& path, std::string_view content) {
  const std::string target = resolve(path);
  const auto slash = target.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);

  // A dot file beside the target: same file system (rename is atomic), hidden from globs.
  std::string temp = dir + "/." + base + ".XXXXXX";
  Fd out;
  out.fd = ::mkstemp(temp.data());
  if (out.fd < 0) return failure("cannot create a temp file beside", target, errno);
  bool keep_temp = false;
  struct Cleanup {
    const std::string& name;
    const bool& keep;
    ~Cleanup() {
      if (!keep) ::unlink(name.c_str());
    }
  } cleanup{temp, keep_temp};

  struct stat old {};
  const mode_t mode = ::stat(target.c_str(), &old) == 0 ? (old.st_mode & 07777) : [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0644 & ~mask);
  }();
  if (::fchmod(out.fd, mode) != 0) return failure("cannot set the mode of", temp, errno);

  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(out.fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return failure("cannot write", temp, errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(out.fd) != 0) return failure("cannot fsync", temp, errno);
  const int closed = ::close(out.fd);
  out.fd = -1;
  if (closed != 0) return failure("cannot close", temp, errno);
  if (::rename(temp.c_str(), target.c_str()) != 0)
    return failure("cannot rename over", target, errno);
  keep_temp = true;

  // The rename itself is durable only once the directory entry is on disk.
  Fd d;
  d.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d.fd >= 0) ::fsync(d.fd);
  return true;
}

}  // namespace sluice::control
