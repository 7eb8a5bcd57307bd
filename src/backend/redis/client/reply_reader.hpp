// Incremental RESP2 reply parsing for the bytes a connection reads, building Reply values
// directly from its own buffer.
#pragma once

#include <cstddef>
#include <string>

#include "sluice/backend/redis/reply.hpp"

namespace sluice::backend::redis::detail {

class ReplyReader {
 public:
  ReplyReader();
  ~ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;

  // Appends bytes read from the socket. False when the reader ran out of memory (never: an
  // allocation failure throws, as everywhere else).
  bool feed(const char* data, std::size_t size);

  enum class Status { kReply, kNeedMore, kError };
  // The next complete reply into `out`; kError means the stream is not RESP (error() says why)
  // and the connection cannot be trusted any more.
  // `compact`: an array of integers is read into Reply::integers (a reply already begun keeps
  // the mode it began in).
  Status next(Reply& out, bool compact = false);
  std::string error() const;

  // Forgets buffered bytes and any partial reply: for a new connection.
  void reset();

 private:
  class Parser;
  std::string buf_;
  std::size_t pos_ = 0;  // where the next reply starts in buf_
  std::string error_;    // set once the stream is not RESP: every later next() fails
  // A top-level array still arriving: its elements so far, of expected_.
  bool open_ = false;
  Reply partial_;
  std::size_t expected_ = 0;
  bool compact_ = false;
};

}  // namespace sluice::backend::redis::detail
