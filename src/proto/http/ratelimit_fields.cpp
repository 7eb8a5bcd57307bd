// RateLimit-Policy / RateLimit / X-RateLimit-* / Retry-After serialisation
// (ratelimit_fields.hpp).
#include "sluice/proto/http/ratelimit_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace sluice::proto::http {
namespace {

// Where the fields are written: a std::string grown once to a bound and written through a
// pointer (a response head: no capacity check or out-of-line append per piece), or appended
// to as usual (a value of a pair list).
class Cursor {
 public:
  // Room for `most` more bytes of `out`; finish() gives back what was not written.
  Cursor(std::string& out, std::size_t most) : out_(out), start_(out.size()) {
    out.resize(start_ + most);
    at_ = out.data() + start_;
  }
  void finish() { out_.resize(static_cast<std::size_t>(at_ - out_.data())); }
  void put(std::string_view s) {
    std::memcpy(at_, s.data(), s.size());
    at_ += s.size();
  }
  void put(char c) { *at_++ = c; }
  void put_int(std::int64_t v) {
    const fmt::format_int digits(v);
    put(std::string_view(digits.data(), digits.size()));
  }

 private:
  std::string& out_;
  std::size_t start_;
  char* at_;
};

class Appender {
 public:
  explicit Appender(std::string* out = nullptr) : out_(out) {}
  void put(std::string_view s) { *out_ += s; }
  void put(char c) { *out_ += c; }
  void put_int(std::int64_t v) {
    const fmt::format_int digits(v);
    out_->append(digits.data(), digits.size());
  }

 private:
  std::string* out_;
};

// The inside of an sf-string: '"' and '\\' escaped, bytes outside 0x20-0x7e dropped.
template <class Sink>
void put_sf_chars(Sink& out, std::string_view s) {
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out.put('\\');
      out.put(c);
    } else if (c >= 0x20 && c <= 0x7e) {
      out.put(c);
    }
  }
}

template <class Sink>
void put_sf_string(Sink& out, std::string_view s) {
  out.put('"');
  put_sf_chars(out, s);
  out.put('"');
}

template <class Sink>
void put_policy_item(Sink& out, const LimitField& l) {
  put_sf_string(out, l.name);
  out.put(";q=");
  out.put_int(l.quota);
  if (l.concurrent) out.put(";qu=\"concurrent-requests\"");
  if (l.window_seconds > 0) {
    out.put(";w=");
    out.put_int(l.window_seconds);
  }
}

// The most bytes write_fields() writes: per limit its name twice, escaped, and the numbers of
// a policy and a status item; then the fixed names and the legacy and Retry-After fields.
std::size_t most_bytes(std::span<const LimitField> limits) {
  std::size_t n = 320;
  for (const LimitField& l : limits) n += 4 * l.name.size() + 128;
  return n;
}

}  // namespace

void append_sf_string(std::string& out, std::string_view s) {
  Appender a(&out);
  put_sf_string(a, s);
}

namespace {

// The fields through a writer: begin(name) gives the sink the value is written to, then end().
// One writing serves a response head (HeadWriter) and a list of pairs (PairWriter).
template <class Writer>
void write_fields(Writer& w, std::span<const LimitField> limits, FieldChoice choice,
                  core::Nanos retry_after) {
  if (choice.ratelimit && !limits.empty()) {
    auto& policy = w.begin("RateLimit-Policy");
    for (std::size_t i = 0; i < limits.size(); ++i) {
      if (i > 0) policy.put(", ");
      put_policy_item(policy, limits[i]);
    }
    w.end();
    if (std::any_of(limits.begin(), limits.end(), [](const LimitField& l) { return l.known; })) {
      auto& status = w.begin("RateLimit");
      const bool draft12 = choice.draft == RateLimitDraft::k12;
      bool first = true;
      for (const LimitField& l : limits) {
        if (!l.known) continue;  // what is left is unknown: no status item
        if (!first) status.put(", ");
        first = false;
        put_sf_string(status, l.name);
        status.put(draft12 ? ";a=" : ";r=");
        status.put_int(l.remaining < 0 ? 0 : l.remaining);
        if (l.reset_seconds >= 0) {
          status.put(draft12 ? ";w=" : ";t=");
          status.put_int(l.reset_seconds);
        }
      }
      w.end();
    }
  }
  const LimitField* tightest = nullptr;
  for (const LimitField& l : limits) {
    if (l.known && (tightest == nullptr || l.remaining < tightest->remaining)) tightest = &l;
  }
  if (choice.legacy && tightest != nullptr) {
    w.begin("X-RateLimit-Limit").put_int(tightest->quota);
    w.end();
    w.begin("X-RateLimit-Remaining").put_int(tightest->remaining < 0 ? 0 : tightest->remaining);
    w.end();
    w.begin("X-RateLimit-Reset").put_int(tightest->reset_seconds < 0 ? 0 : tightest->reset_seconds);
    w.end();
  }
  if (retry_after >= 0) {
    w.begin("Retry-After").put_int(retry_after_seconds(retry_after));
    w.end();
  }
}

// "Name: value\r\n" straight into a response head.
struct HeadWriter {
  Cursor& head;
  Cursor& begin(std::string_view name) {
    head.put(name);
    head.put(": ");
    return head;
  }
  void end() { head.put("\r\n"); }
};

struct PairWriter {
  FieldPairs& pairs;
  Appender value;
  Appender& begin(std::string_view name) {
    value = Appender(&pairs.emplace_back(name, std::string()).second);
    return value;
  }
  void end() {}
};

}  // namespace

void append_ratelimit_fields(std::string& out, std::span<const LimitField> limits,
                             FieldChoice choice, core::Nanos retry_after) {
  Cursor cursor(out, most_bytes(limits));
  HeadWriter w{cursor};
  write_fields(w, limits, choice, retry_after);
  cursor.finish();
}

FieldPairs ratelimit_field_pairs(std::span<const LimitField> limits, FieldChoice choice,
                                 core::Nanos retry_after) {
  FieldPairs pairs;
  PairWriter w{pairs, Appender()};
  write_fields(w, limits, choice, retry_after);
  return pairs;
}

std::int64_t retry_after_seconds(core::Nanos wait) {
  const std::int64_t s = core::ceil_seconds(wait);
  return s < 1 ? 1 : s;
}

}  // namespace sluice::proto::http
