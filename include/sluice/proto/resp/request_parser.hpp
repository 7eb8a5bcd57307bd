// RESP request parsing for a server: client commands arrive as RESP arrays of bulk strings
// ("*3\r\n$3\r\nSET\r\n...") or as inline lines ("PING\r\n"), pipelined, split anywhere by TCP.
// Knows nothing of commands or limits: it turns bytes into argument lists, or names the
// protocol error as Redis does ("Protocol error: invalid bulk length"), after which the
// connection must be closed (the stream has lost its framing).
//
// Arrays are parsed by hiredis's reader (libhiredis, redisReader) with our own object
// functions, so no per-element allocation: arguments are copied into one arena per command.
// Debian 12 ships hiredis 0.14.1, which predates the reader's maxbulklen/maxelements caps and
// parses lengths laxly ("$abc" reads as a nil, "*abc" as an empty array), so the parser checks
// each header before hiredis acts on it: the array header strictly and against
// max_elements before hiredis sees it, a bulk header as soon as it is complete. A client
// therefore cannot make the server hold more than it actually sent, nor more than
// max_bulk + a header for one argument, nor more than max_command_bytes for one command.
// A bulk payload must end in CRLF where its header says: Redis 7 skips those two bytes
// unchecked, which lets a longer payload frame a command of its own; here it is
// "invalid bulk length".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct redisReader;

namespace sluice::proto::resp {

struct ParserLimits {
  std::size_t max_bulk = 512 * 1024;            // bytes of one argument
  std::size_t max_elements = 1024;              // arguments of one command
  std::size_t max_command_bytes = 1024 * 1024;  // argument bytes of one command, summed
  std::size_t max_inline = 64 * 1024;           // one inline command line (Redis's limit)
};

enum class ParseStatus : std::uint8_t {
  kCommand,  // args() holds the next command
  kPending,  // need more bytes
  kError,    // error() says why; the stream is unusable from here on
};

class RequestParser {
 public:
  explicit RequestParser(ParserLimits limits = {});
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Appends bytes received from the client.
  void feed(const char* data, std::size_t size);
  void feed(std::string_view bytes) { feed(bytes.data(), bytes.size()); }

  // Parses the next complete command. Empty commands ("*0", a blank inline line) are skipped
  // as Redis skips them. After kError every further call returns kError.
  ParseStatus next();

  // The last command's arguments (args()[0] is the name); valid until the next next()/feed().
  std::span<const std::string_view> args() const { return views_; }

  // "Protocol error: ..." (Redis's text, without the "ERR " code) after kError.
  const std::string& error() const { return error_; }

  // Bytes received but not yet parsed into a command (the reader's unconsumed input).
  std::size_t buffered() const;

  // Used by the reader's object functions (public for them; not for callers).
  struct Sink;

 private:
  ParseStatus fail(std::string message);
  ParseStatus next_inline();
  ParseStatus check_pending();
  void consume(std::size_t bytes);
  void finish_command();

  ParserLimits limits_;
  redisReader* reader_;
  // The command being assembled by the reader's callbacks.
  std::string arena_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // offset, length in arena_
  std::vector<std::string_view> views_;
  std::string error_;  // set by a callback or a header check
  bool failed_ = false;
};

}  // namespace sluice::proto::resp
