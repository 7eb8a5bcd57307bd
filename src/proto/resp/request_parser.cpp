// RequestParser (request_parser.hpp): hiredis's reader for arrays, guarded by strict header
// checks; inline commands split as Redis's sdssplitargs splits them.
#include "sluice/proto/resp/request_parser.hpp"

#include <hiredis/read.h>
extern "C" {  // hiredis 0.14's sds.h has no C++ guard of its own
#include <hiredis/sds.h>
}

#include <cctype>
#include <climits>
#include <cstring>
#include <new>

namespace sluice::proto::resp {

namespace {

// A complete RESP integer header is at most "-" + 19 digits + CRLF; longer runs without a
// CRLF are garbage, refused without waiting for more.
constexpr std::size_t kMaxCountString = 32;

// The arena keeps this much capacity between commands; a big command's growth is given back.
constexpr std::size_t kKeepBytes = 64 * 1024;

// Where hiredis 0.14 compacts its buffer (it moves the unread rest down once 1 KiB is read).
constexpr std::size_t kCompactAt = 1024;

// Sentinel objects for the reader: it needs non-null pointers back and never looks inside
// them (our freeObject ignores them), so no per-element allocation happens.
char g_element;
char g_nil;

enum class Header { kOk, kIncomplete, kBad };

// A RESP length at `p` (after the type byte) up to CRLF, parsed as Redis's string2ll does:
// optional '-', no '+', no leading zeros, no overflow. `used` counts the bytes up to and
// including the CRLF.
Header parse_length(const char* p, std::size_t n, long long& value, std::size_t& used) {
  const void* cr = std::memchr(p, '\r', n);
  if (cr == nullptr) return Header::kIncomplete;
  const auto len = static_cast<std::size_t>(static_cast<const char*>(cr) - p);
  if (len + 1 >= n) return Header::kIncomplete;  // the '\n' is not here yet
  if (p[len + 1] != '\n') return Header::kBad;
  used = len + 2;
  std::size_t i = 0;
  bool negative = false;
  if (len > 0 && p[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == len) return Header::kBad;
  if (p[i] == '0' && len - i > 1) return Header::kBad;
  if (p[i] == '0' && negative) return Header::kBad;
  unsigned long long v = 0;
  for (; i < len; ++i) {
    const char c = p[i];
    if (c < '0' || c > '9') return Header::kBad;
    if (v > (ULLONG_MAX - 9) / 10) return Header::kBad;
    v = v * 10 + static_cast<unsigned long long>(c - '0');
  }
  if (v > static_cast<unsigned long long>(LLONG_MAX)) return Header::kBad;
  value = negative ? -static_cast<long long>(v) : static_cast<long long>(v);
  return Header::kOk;
}

char type_byte(int type) {
  switch (type) {
    case REDIS_REPLY_STATUS:
      return '+';
    case REDIS_REPLY_ERROR:
      return '-';
    case REDIS_REPLY_INTEGER:
      return ':';
    case REDIS_REPLY_ARRAY:
      return '*';
    default:
      return '?';
  }
}

std::string expected_dollar(char got) {
  std::string m = "Protocol error: expected '$', got '";
  m += got;
  m += '\'';
  return m;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// What a backslash escape inside double quotes stands for (\n \r \t \b \a; any other
// character stands for itself, so \\ and \" do too).
char unescape(char c) {
  switch (c) {
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'b':
      return '\b';
    case 'a':
      return '\a';
    default:
      return c;
  }
}

// Appends the inline word that starts at line[i] (not a space) to `out`, its quotes resolved as
// Redis's sdssplitargs does, and moves i past it. An error text when its quotes do not balance
// or a closing quote is not followed by a space or the end of the line.
const char* read_inline_word(std::string_view line, std::size_t& i, std::string& out) {
  static constexpr const char* kUnbalanced = "Protocol error: unbalanced quotes in request";
  const std::size_t end = line.size();
  char quote = 0;  // the open quote, if any
  for (;;) {
    if (quote == 0) {
      if (i >= end || is_space(line[i])) return nullptr;
      if (line[i] == '"' || line[i] == '\'') {
        quote = line[i++];
      } else {
        out += line[i++];
      }
      continue;
    }
    if (i >= end) return kUnbalanced;
    const char c = line[i];
    if (c == quote) {
      if (i + 1 < end && !is_space(line[i + 1])) return kUnbalanced;
      ++i;
      return nullptr;
    }
    if (quote == '"' && c == '\\' && i + 3 < end && line[i + 1] == 'x' &&
        hex_value(line[i + 2]) >= 0 && hex_value(line[i + 3]) >= 0) {
      out += static_cast<char>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3]));
      i += 4;
    } else if (quote == '"' && c == '\\' && i + 1 < end) {
      out += unescape(line[i + 1]);
      i += 2;
    } else if (quote == '\'' && c == '\\' && i + 1 < end && line[i + 1] == '\'') {
      out += '\'';
      i += 2;
    } else {
      out += line[i++];
    }
  }
}

}  // namespace

// The reader's object functions. hiredis calls them as it completes each element; they copy
// the argument into the parser's arena and enforce the caps and the "array of bulk strings"
// shape of a request.
struct RequestParser::Sink {
  static RequestParser& parser(const redisReadTask* t) {
    return *static_cast<RequestParser*>(t->privdata);
  }

  static void* create_string(const redisReadTask* t, char* str, std::size_t len) {
    RequestParser& p = parser(t);
    if (t->parent == nullptr) {  // cannot happen: non-'*' input takes the inline path
      p.error_ = "Protocol error: expected '*'";
      return nullptr;
    }
    if (t->type != REDIS_REPLY_STRING) {
      p.error_ = expected_dollar(type_byte(t->type));
      return nullptr;
    }
    if (len > p.limits_.max_bulk) {
      p.error_ = "Protocol error: invalid bulk length";
      return nullptr;
    }
    // hiredis (and Redis itself) skip the two bytes after the payload unread, so "$4 PINGXX"
    // would pass as PING and leave "XX..." to be read as the next command: a payload that
    // is not followed by CRLF is not the length its header says. The reader calls us only
    // once len + 2 bytes are buffered after `str`.
    if (str[len] != '\r' || str[len + 1] != '\n') {
      p.error_ = "Protocol error: invalid bulk length";
      return nullptr;
    }
    if (p.arena_.size() + len > p.limits_.max_command_bytes) {
      p.error_ = "Protocol error: command too big";
      return nullptr;
    }
    p.spans_.emplace_back(p.arena_.size(), len);
    p.arena_.append(str, len);
    return &g_element;
  }

  static void* create_array(const redisReadTask* t, int elements) {
    RequestParser& p = parser(t);
    if (t->parent != nullptr) {
      p.error_ = expected_dollar('*');
      return nullptr;
    }
    // The header was checked before hiredis saw it; this is the second line of defence.
    if (elements < 0 || static_cast<std::size_t>(elements) > p.limits_.max_elements) {
      p.error_ = "Protocol error: invalid multibulk length";
      return nullptr;
    }
    if (p.arena_.capacity() > kKeepBytes) std::string().swap(p.arena_);  // after a big one
    p.arena_.clear();
    p.spans_.clear();
    p.spans_.reserve(static_cast<std::size_t>(elements));
    return &g_element;
  }

  static void* create_integer(const redisReadTask* t, long long) {
    parser(t).error_ = expected_dollar(':');
    return nullptr;
  }

  static void* create_nil(const redisReadTask* t) {
    // "$-1" or a length hiredis could not read, inside a command: Redis refuses both.
    parser(t).error_ = "Protocol error: invalid bulk length";
    return t->parent == nullptr ? &g_nil : nullptr;
  }

  static void free_object(void*) {}
};

namespace {
redisReplyObjectFunctions g_functions = {
    &RequestParser::Sink::create_string, &RequestParser::Sink::create_array,
    &RequestParser::Sink::create_integer, &RequestParser::Sink::create_nil,
    &RequestParser::Sink::free_object};
}  // namespace

RequestParser::RequestParser(ParserLimits limits)
    : limits_(limits), reader_(redisReaderCreateWithFunctions(&g_functions)) {
  if (reader_ == nullptr) throw std::bad_alloc();
  reader_->privdata = this;
  // Keep at most this much idle buffer between bursts (hiredis frees a larger one).
  reader_->maxbuf = 16 * 1024;
}

RequestParser::~RequestParser() { redisReaderFree(reader_); }

void RequestParser::feed(const char* data, std::size_t size) {
  if (failed_ || size == 0) return;
  if (redisReaderFeed(reader_, data, size) != REDIS_OK) fail("Protocol error: out of memory");
}

std::size_t RequestParser::buffered() const {
  return reader_->buf == nullptr ? 0 : reader_->len - reader_->pos;
}

ParseStatus RequestParser::fail(std::string message) {
  failed_ = true;
  error_ = std::move(message);
  views_.clear();
  return ParseStatus::kError;
}

void RequestParser::consume(std::size_t bytes) {
  redisReader* r = reader_;
  r->pos += bytes;
  if (r->pos == r->len) {
    sdsclear(r->buf);
    r->pos = r->len = 0;
  } else if (r->pos >= kCompactAt) {
    sdsrange(r->buf, static_cast<int>(r->pos), -1);
    r->pos = 0;
    r->len = sdslen(r->buf);
  }
}

void RequestParser::finish_command() {
  views_.clear();
  views_.reserve(spans_.size());
  for (const auto& [off, len] : spans_) views_.emplace_back(arena_.data() + off, len);
}

ParseStatus RequestParser::next() {
  if (failed_) return ParseStatus::kError;
  redisReader* r = reader_;
  for (;;) {
    if (r->ridx == -1) {  // between commands: decide the form of the next one
      if (r->buf == nullptr || r->pos >= r->len) return ParseStatus::kPending;
      if (r->buf[r->pos] != '*') {
        const ParseStatus s = next_inline();
        if (s == ParseStatus::kCommand && views_.empty()) continue;  // blank line
        return s;
      }
      long long count = 0;
      std::size_t used = 0;
      const std::size_t avail = r->len - r->pos - 1;
      switch (parse_length(r->buf + r->pos + 1, avail, count, used)) {
        case Header::kIncomplete:
          if (avail > kMaxCountString) return fail("Protocol error: too big mbulk count string");
          return ParseStatus::kPending;
        case Header::kBad:
          return fail("Protocol error: invalid multibulk length");
        case Header::kOk:
          break;
      }
      if (count <= 0) {  // "*0" and "*-1": Redis ignores them
        consume(used + 1);
        continue;
      }
      if (static_cast<unsigned long long>(count) > limits_.max_elements) {
        return fail("Protocol error: invalid multibulk length");
      }
    }
    void* reply = nullptr;
    error_.clear();
    if (redisReaderGetReply(r, &reply) != REDIS_OK) {
      if (!error_.empty()) return fail(error_);
      // hiredis's own complaint: a bad type byte, "Protocol error, got "x" as reply type byte".
      std::string_view what = r->errstr;
      const auto q1 = what.find('"');
      const auto q2 = q1 == std::string_view::npos ? q1 : what.find('"', q1 + 1);
      if (q2 != std::string_view::npos && q2 == q1 + 2) return fail(expected_dollar(what[q1 + 1]));
      // Lengths hiredis refused itself ("Bad bulk string length", "Multi-bulk length out of
      // range"): Redis's names for them.
      if (what.find("ulti-bulk length") != std::string_view::npos) {
        return fail("Protocol error: invalid multibulk length");
      }
      if (what.find("ulk string length") != std::string_view::npos) {
        return fail("Protocol error: invalid bulk length");
      }
      return fail("Protocol error: " + std::string(what));
    }
    if (reply == nullptr) return check_pending();
    if (reply == &g_nil) continue;  // a nil root: only "*-1", consumed above; defensive
    finish_command();
    if (views_.empty()) continue;
    return ParseStatus::kCommand;
  }
}

// hiredis is waiting inside a command. If it waits on a header that is already complete (or
// can never be), refuse now instead of buffering what the client announced.
ParseStatus RequestParser::check_pending() {
  redisReader* r = reader_;
  if (r->ridx < 1 || r->buf == nullptr) return ParseStatus::kPending;
  const redisReadTask& t = r->rstack[r->ridx];
  if (t.type < 0) return ParseStatus::kPending;  // the next element's type byte is not here
  if (t.type != REDIS_REPLY_STRING) return fail(expected_dollar(type_byte(t.type)));
  long long len = 0;
  std::size_t used = 0;
  const std::size_t avail = r->len - r->pos;
  switch (parse_length(r->buf + r->pos, avail, len, used)) {
    case Header::kIncomplete:
      if (avail > kMaxCountString) return fail("Protocol error: too big bulk count string");
      return ParseStatus::kPending;
    case Header::kBad:
      return fail("Protocol error: invalid bulk length");
    case Header::kOk:
      break;
  }
  if (len < 0 || static_cast<unsigned long long>(len) > limits_.max_bulk) {
    return fail("Protocol error: invalid bulk length");
  }
  if (arena_.size() + static_cast<std::size_t>(len) > limits_.max_command_bytes) {
    return fail("Protocol error: command too big");
  }
  return ParseStatus::kPending;
}

// An inline command: one line, split on whitespace, with Redis's double-quote escapes
// (\n \r \t \b \a \\ \" \xHH) and single quotes (\' only).
ParseStatus RequestParser::next_inline() {
  redisReader* r = reader_;
  const char* p = r->buf + r->pos;
  const std::size_t n = r->len - r->pos;
  const void* nl = std::memchr(p, '\n', n);
  if (nl == nullptr) {
    // The same cap as a whole line's below: a CR that may end it does not count, or a line of
    // exactly max_inline bytes would pass or fail by where TCP cut it.
    const std::size_t so_far = n > 0 && p[n - 1] == '\r' ? n - 1 : n;
    if (so_far > limits_.max_inline) return fail("Protocol error: too big inline request");
    return ParseStatus::kPending;
  }
  const auto line_bytes = static_cast<std::size_t>(static_cast<const char*>(nl) - p) + 1;
  std::size_t end = line_bytes - 1;
  if (end > 0 && p[end - 1] == '\r') --end;
  if (end > limits_.max_inline) return fail("Protocol error: too big inline request");

  arena_.clear();
  spans_.clear();
  const std::string_view line(p, end);
  for (std::size_t i = 0;;) {
    while (i < end && is_space(p[i])) ++i;
    if (i >= end) break;
    if (spans_.size() >= limits_.max_elements) return fail("Protocol error: too many arguments");
    const std::size_t start = arena_.size();
    if (const char* error = read_inline_word(line, i, arena_)) return fail(error);
    spans_.emplace_back(start, arena_.size() - start);
  }
  consume(line_bytes);
  finish_command();
  return ParseStatus::kCommand;
}

}  // namespace sluice::proto::resp
