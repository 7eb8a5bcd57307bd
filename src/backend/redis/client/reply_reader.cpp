// ReplyReader (reply_reader.hpp): a RESP2 reply parser over the connection's buffered bytes.
// Written here rather than with hiredis's reader, whose per-element task stack, callbacks and
// sds buffer cost a decision of the script's reply (8 integers) about as much as encoding its
// request did; an integer here is a digit loop. A reply split across reads resumes at the
// element of its top-level array it stopped in (a nested element is parsed again whole).
#include "reply_reader.hpp"

#include <algorithm>
#include <cstring>

namespace sluice::backend::redis::detail {

namespace {

// As hiredis: deeper nesting than this is refused, and so are lengths past these.
constexpr int kMaxDepth = 7;
constexpr long long kMaxBulk = 512LL * 1024 * 1024;
constexpr long long kMaxElements = (1LL << 32) - 1;
// Consumed bytes are dropped once they are this many (and at once when nothing is left).
constexpr std::size_t kCompactAt = 64 * 1024;

// After ':', an optional '-', up to 19 digits and "\r\n", in one pass over locals; `p` moves
// past it on kReply.
inline ReplyReader::Status read_integer(const char*& p, const char* end, long long& v) {
  const char* c = p;
  const bool negative = c != end && *c == '-';
  if (negative) ++c;
  const char* digits = c;
  unsigned long long u = 0;
  while (c != end && static_cast<unsigned char>(*c - '0') < 10) {
    u = u * 10 + static_cast<unsigned>(*c - '0');
    ++c;
  }
  if (end - c < 2) return ReplyReader::Status::kNeedMore;
  const auto n = c - digits;
  if (n == 0 || n > 19 || c[0] != '\r' || c[1] != '\n' ||
      u > (negative ? 9223372036854775808ULL : 9223372036854775807ULL)) {
    return ReplyReader::Status::kError;
  }
  v = negative ? static_cast<long long>(0 - u) : static_cast<long long>(u);
  p = c + 2;
  return ReplyReader::Status::kReply;
}

// Up to `count` integer elements (":<n>\r\n") from `p` into `out`: the script's answers, 8 a
// decision. Stops before anything else (kReply: the caller goes on), at the end of the bytes
// (kNeedMore) or at a malformed one (kError); `p` is past the last one read.
ReplyReader::Status read_integers(const char*& p, const char* end, std::size_t count,
                                  std::vector<long long>& out) {
  using Status = ReplyReader::Status;
  const char* at = p;
  for (; count > 0 && at != end && *at == ':'; --count) {
    const char* c = at + 1;
    long long v = 0;
    const Status s = read_integer(c, end, v);
    if (s == Status::kNeedMore) break;
    if (s == Status::kError) {
      p = at;
      return s;
    }
    out.push_back(v);
    at = c;
  }
  p = at;
  return count == 0 || (at != end && *at != ':') ? Status::kReply : Status::kNeedMore;
}

}  // namespace

// One parse attempt over buf_[pos, end): kNeedMore leaves `pos` where it was for the caller.
class ReplyReader::Parser {
 public:
  Parser(const std::string& buf, std::size_t pos)
      : p_(buf.data() + pos), end_(buf.data() + buf.size()) {}

  // With `count`, an array is read up to its length only (into *count), its elements left to
  // the caller.
  Status parse(Reply& out, int depth, std::size_t* count = nullptr) {
    if (p_ == end_) return Status::kNeedMore;
    const char type = *p_++;
    if (type == ':') {  // the script's answers: digits read once, without a line search
      out.type = Reply::Type::kInteger;
      return integer(out.integer);
    }
    std::string_view line;
    if (const Status s = read_line(line); s != Status::kReply) return s;
    switch (type) {
      case '+':
      case '-':
        out.type = type == '+' ? Reply::Type::kStatus : Reply::Type::kError;
        out.str.assign(line);
        return Status::kReply;
      case '$':
        return bulk(line, out);
      case '*':
        return array(line, out, depth, count);
      default:
        return fail(std::string("protocol error, got \"") + type + "\" as reply type byte");
    }
  }

  const char* at() const { return p_; }
  std::string error;

  Status integer(long long& v) {
    const Status s = read_integer(p_, end_, v);
    return s == Status::kError ? fail("bad integer value") : s;
  }

 private:
  Status read_line(std::string_view& line) {
    const void* cr = std::memchr(p_, '\r', static_cast<std::size_t>(end_ - p_));
    if (cr == nullptr) return Status::kNeedMore;
    const char* c = static_cast<const char*>(cr);
    if (c + 1 >= end_) return Status::kNeedMore;
    if (c[1] != '\n') return fail("protocol error: a line without \\n after \\r");
    line = std::string_view(p_, static_cast<std::size_t>(c - p_));
    p_ = c + 2;
    return Status::kReply;
  }

  static bool number(std::string_view s, long long& v) {
    if (s.empty()) return false;
    const bool negative = s.front() == '-';
    if (negative) s.remove_prefix(1);
    if (s.empty() || s.size() > 19) return false;
    unsigned long long u = 0;
    for (const char c : s) {
      if (c < '0' || c > '9') return false;
      u = u * 10 + static_cast<unsigned>(c - '0');
    }
    if (u > (negative ? 9223372036854775808ULL : 9223372036854775807ULL)) return false;
    v = negative ? static_cast<long long>(0 - u) : static_cast<long long>(u);
    return true;
  }

  Status bulk(std::string_view line, Reply& out) {
    long long len = 0;
    if (!number(line, len) || len < -1 || len > kMaxBulk) return fail("bad bulk string length");
    if (len == -1) {
      out.type = Reply::Type::kNil;
      return Status::kReply;
    }
    const auto n = static_cast<std::size_t>(len);
    if (static_cast<std::size_t>(end_ - p_) < n + 2) return Status::kNeedMore;
    if (p_[n] != '\r' || p_[n + 1] != '\n') return fail("protocol error: a bulk string's end");
    out.type = Reply::Type::kString;
    out.str.assign(p_, n);
    p_ += n + 2;
    return Status::kReply;
  }

  Status array(std::string_view line, Reply& out, int depth, std::size_t* head_only) {
    long long n = 0;
    if (!number(line, n) || n < -1 || n > kMaxElements) return fail("bad multi-bulk length");
    if (n == -1) {
      out.type = Reply::Type::kNil;
      return Status::kReply;
    }
    if (depth >= kMaxDepth) return fail("no support for nested multi bulk replies with depth > 7");
    out.type = Reply::Type::kArray;
    if (head_only != nullptr) {
      *head_only = static_cast<std::size_t>(n);
      return Status::kReply;
    }
    // Never more elements than the bytes left could hold (3 each, ":0\r\n" less one).
    const auto count = static_cast<std::size_t>(n);
    if (count > static_cast<std::size_t>(end_ - p_) / 3 + 1) return Status::kNeedMore;
    out.elements.resize(count);
    for (Reply& e : out.elements) {
      if (const Status s = parse(e, depth + 1); s != Status::kReply) return s;
    }
    return Status::kReply;
  }

  Status fail(std::string why) {
    error = std::move(why);
    return Status::kError;
  }

  const char* p_;
  const char* end_;
};

ReplyReader::ReplyReader() = default;
ReplyReader::~ReplyReader() = default;

void ReplyReader::reset() {
  buf_.clear();
  buf_.shrink_to_fit();
  pos_ = 0;
  error_.clear();
  open_ = false;
  partial_ = Reply();
}

bool ReplyReader::feed(const char* data, std::size_t size) {
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ >= kCompactAt) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  buf_.append(data, size);
  return true;
}

ReplyReader::Status ReplyReader::next(Reply& out, bool compact) {
  if (!error_.empty()) return Status::kError;
  if (!open_) {  // a new reply: the whole of it, or of an array its length
    Parser parser(buf_, pos_);
    partial_ = Reply();
    expected_ = 0;
    const Status s = parser.parse(partial_, 0, &expected_);
    if (s == Status::kError) error_ = std::move(parser.error);
    if (s != Status::kReply) return s;
    pos_ = static_cast<std::size_t>(parser.at() - buf_.data());
    open_ = partial_.type == Reply::Type::kArray;
    compact_ = compact;
    const std::size_t room = std::min<std::size_t>(expected_, 1024);
    if (open_ && compact_) partial_.integers.reserve(std::min<std::size_t>(expected_, 1 << 16));
    if (open_ && !compact_) partial_.elements.reserve(room);
  }
  // An array's elements one by one, each parsed once: a reply split across reads resumes at
  // the element it stopped in, rather than parsing the batch's answers again from the start.
  while (open_ && partial_.integers.size() + partial_.elements.size() < expected_) {
    if (pos_ == buf_.size()) return Status::kNeedMore;
    if (compact_ && buf_[pos_] == ':') {
      const char* p = buf_.data() + pos_;
      const Status s = read_integers(p, buf_.data() + buf_.size(),
                                     expected_ - partial_.integers.size(), partial_.integers);
      pos_ = static_cast<std::size_t>(p - buf_.data());
      if (s == Status::kError) error_ = "bad integer value";
      if (s != Status::kReply) return s;
      continue;
    }
    if (compact_) {  // not integers only after all: the elements as anyone else reads them
      compact_ = false;
      for (const long long v : partial_.integers) {
        partial_.elements.push_back(Reply{Reply::Type::kInteger, {}, v, {}, {}});
      }
      partial_.integers.clear();
    }
    Parser parser(buf_, pos_);
    Reply element;
    const Status s = parser.parse(element, 1);
    if (s == Status::kError) error_ = std::move(parser.error);
    if (s != Status::kReply) return s;
    pos_ = static_cast<std::size_t>(parser.at() - buf_.data());
    partial_.elements.push_back(std::move(element));
  }
  open_ = false;
  out = std::move(partial_);
  return Status::kReply;
}

std::string ReplyReader::error() const { return error_.empty() ? "protocol error" : error_; }

}  // namespace sluice::backend::redis::detail
