// A command as Redis reads it (a RESP multibulk of bulk strings), appended to a connection's
// output buffer so a whole loop turn's commands leave in one write.
// Written here rather than with hiredis's redisFormatCommandArgv, which returns a malloc'd
// copy per command: appending in place saves one allocation and one copy per command, and the
// format is three lines of the RESP spec. Replies are read by reply_reader.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::backend::redis::detail {

// "<kind><n>\r\n": an array's ('*') or a bulk string's ('$') header.
void append_header(std::string& out, char kind, std::size_t n);
// One argument as a bulk string; an integer in decimal without a string of its own.
void append_bulk(std::string& out, std::string_view arg);
void append_bulk_integer(std::string& out, std::int64_t v);
// The same written at `at`, which has room for 24 + arg.size() bytes (put_bulk) or for
// kMaxBulkInteger (put_bulk_integer); each returns the end of what it wrote. For callers that
// compose several arguments on the stack and append them at once.
inline constexpr std::size_t kMaxBulkInteger = 32;
char* put_bulk(char* at, std::string_view arg);
char* put_bulk_integer(char* at, std::int64_t v);
// The arguments of bulk strings written as above, back as strings (for tests and replay).
std::vector<std::string> read_bulks(std::string_view wire);

void append_command(std::string& out, const std::vector<std::string>& args);
void append_command(std::string& out, std::initializer_list<std::string_view> args);

}  // namespace sluice::backend::redis::detail
