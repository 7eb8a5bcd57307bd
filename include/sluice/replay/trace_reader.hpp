// Reads a replay trace (`t_us,key[,cost]` lines) from a stream, one request at a time, with
// errors that name the line. Streams: memory is one line, whatever the trace's length.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/time.hpp"

namespace sluice::replay {

struct TraceRequest {
  std::int64_t t_us = 0;
  std::string_view t_text;  // as written, echoed to the output
  std::string_view key;
  std::int64_t cost = 1;
  std::string_view cost_text;  // empty when the cost column is absent
  std::int64_t line = 0;       // physical line number, from 1
};

class TraceReader {
 public:
  static constexpr std::size_t kMaxLineBytes = 1 << 20;

  explicit TraceReader(std::FILE* in) : in_(in), buffer_(1 << 16) {}

  // The next request; nullopt at the end of input or on error (then error() is set).
  // Views point into the reader's buffer and stay valid until the next call.
  std::optional<TraceRequest> next();

  const std::string& error() const { return error_; }

 private:
  bool read_line(std::string_view& line);
  std::optional<TraceRequest> fail(std::string message);

  std::FILE* in_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // unread data is buffer_[begin_, end_)
  std::size_t end_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 0;
  std::int64_t last_t_us_ = 0;
  std::string error_;
};

// Parses one trace line's fields (exposed for tests). Errors carry no line prefix.
core::Expected<TraceRequest> parse_trace_line(std::string_view line);

}  // namespace sluice::replay
