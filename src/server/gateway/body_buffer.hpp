// A request body held before it is forwarded, as nginx buffers one (client_body_buffer_size,
// client_body_temp_path): its first bytes in memory, the rest in an unlinked temporary file.
// No sockets here, so that the unit tests can fill one, read it back and see the file go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/time.hpp"

namespace sluice::server::gateway {

class BodyBuffer {
 public:
  BodyBuffer() = default;
  ~BodyBuffer() { reset(); }
  BodyBuffer(const BodyBuffer&) = delete;
  BodyBuffer& operator=(const BodyBuffer&) = delete;

  // A new body: at most `memory` bytes of it in memory, allocated as they arrive (`expected`,
  // its Content-Length, lets a body that fits be allocated once), the rest appended to a file
  // made in `temp_dir` ("": the system's temporary directory) when the first of it comes.
  void start(std::size_t memory, std::optional<std::uint64_t> expected, std::string_view temp_dir);

  // Room for the next bytes in memory, at most `want` of them; empty when memory is full.
  std::span<char> memory_room(std::size_t want);
  // `n` bytes were put at the front of the last memory_room().
  void commit(std::size_t n) { used_ += n; }

  // Appends `data` to the file, making it first. False when it cannot be made or written:
  // `data` is kept as the tail (what follows the file), error() says why, and nothing more may
  // be added.
  bool spill(std::string_view data);

  std::uint64_t size() const { return used_ + file_size_ + tail_.size(); }
  std::string_view memory() const { return {memory_.get(), used_}; }
  std::uint64_t file_size() const { return file_size_; }
  std::string_view tail() const { return tail_; }
  const std::string& error() const { return error_; }
  // Reads up to `n` bytes of the file from `offset` into `out`: how many, or -1 (errno set).
  std::ptrdiff_t read_file(std::uint64_t offset, char* out, std::size_t n) const;

  // Frees the memory and closes the file, whose space the system then takes back.
  void reset();

 private:
  std::unique_ptr<char[]> memory_;
  std::size_t capacity_ = 0;  // allocated
  std::size_t used_ = 0;      // filled
  std::size_t limit_ = 0;     // the most memory may hold
  std::size_t first_ = 0;     // the first allocation
  std::string temp_dir_;
  int fd_ = -1;
  std::uint64_t file_size_ = 0;
  std::string tail_;
  std::string error_;
};

// One line on stderr saying that a body could not be buffered in a file and is streamed, at
// most once every 10 s in the process, with the count passed over since the last line.
void warn_spill_failed(const BodyBuffer& body, core::Nanos now);

}  // namespace sluice::server::gateway
