// Incremental RESP reply parsing with hiredis's reader, building Reply values directly (no
// redisReply tree to convert and free), for the bytes a connection reads.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "sluice/backend/redis/reply.hpp"

struct redisReader;

namespace sluice::backend::redis::detail {

class ReplyReader {
 public:
  ReplyReader();
  ~ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;

  // Appends bytes read from the socket. False when the reader ran out of memory.
  bool feed(const char* data, std::size_t size);

  enum class Status { kReply, kNeedMore, kError };
  // The next complete reply into `out`; kError means the stream is not RESP (error() says why)
  // and the connection cannot be trusted any more.
  Status next(Reply& out);
  std::string error() const;

  // Forgets buffered bytes and any partial reply: for a new connection.
  void reset();

 private:
  redisReader* reader_ = nullptr;
};

}  // namespace sluice::backend::redis::detail
