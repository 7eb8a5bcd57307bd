// RESP reply serialisation, RESP2 and RESP3 (a connection switches with HELLO 3). Appends to
// a caller's buffer, so a pipeline's replies go out in one write. Types RESP2 lacks are
// written the way Redis writes them to a RESP2 client: a map as a flat array of key, value
// pairs, a null as "$-1", a verbatim string as a bulk string.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::proto::resp {

class ReplyWriter {
 public:
  // `protocol` 2 or 3.
  explicit ReplyWriter(std::string& out, int protocol = 2) : out_(out), protocol_(protocol) {}

  int protocol() const { return protocol_; }
  void set_protocol(int protocol) { protocol_ = protocol; }
  std::string& buffer() { return out_; }

  // "+OK": `s` must not contain CR or LF.
  void simple(std::string_view s) {
    out_ += '+';
    out_ += s;
    out_ += "\r\n";
  }

  // "-ERR message": `message` starts with the error code ("ERR ...", "NOPROTO ..."). CR and
  // LF inside it become spaces, as Redis does, so a reply can never break the framing.
  void error(std::string_view message);

  void integer(std::int64_t v) { header(':', v); }

  void bulk(std::string_view s) {
    header('$', static_cast<std::int64_t>(s.size()));
    out_ += s;
    out_ += "\r\n";
  }

  // The null bulk string: "$-1" in RESP2, "_" in RESP3.
  void null() { out_ += protocol_ == 3 ? "_\r\n" : "$-1\r\n"; }

  void array(std::size_t n) { header('*', static_cast<std::int64_t>(n)); }

  // A map of n pairs; write 2n elements after it (key, value, key, value...).
  void map(std::size_t n) {
    if (protocol_ == 3) {
      header('%', static_cast<std::int64_t>(n));
    } else {
      header('*', static_cast<std::int64_t>(2 * n));
    }
  }

  // A set of n elements ("~n" in RESP3, an array in RESP2): COMMAND's flags.
  void set(std::size_t n) { header(protocol_ == 3 ? '~' : '*', static_cast<std::int64_t>(n)); }

  // Text meant for humans (INFO, CLIENT INFO): RESP3's verbatim string "=len\r\ntxt:...".
  void verbatim(std::string_view s) {
    if (protocol_ != 3) {
      bulk(s);
      return;
    }
    header('=', static_cast<std::int64_t>(s.size() + 4));
    out_ += "txt:";
    out_ += s;
    out_ += "\r\n";
  }

 private:
  void header(char type, std::int64_t v) {
    char buf[24];
    buf[0] = type;
    auto r = std::to_chars(buf + 1, buf + sizeof(buf) - 2, v);
    *r.ptr++ = '\r';
    *r.ptr++ = '\n';
    out_.append(buf, static_cast<std::size_t>(r.ptr - buf));
  }

  std::string& out_;
  int protocol_;
};

}  // namespace sluice::proto::resp
