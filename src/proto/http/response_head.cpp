// The response head scanner (response_head.hpp). One pass over the bytes, 16 at a time where
// the CPU allows (picohttpparser's way), else a table lookup per byte; nothing is copied. Every
// check that fails says kFallback rather than an error: the full parser behind it owns every
// refusal, so this file cannot change what is refused.
#include "sluice/proto/http/response_head.hpp"

#include <bit>
#include <limits>

#if defined(__SSSE3__)
#include <tmmintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sluice/proto/http/field_values.hpp"

namespace sluice::proto::http {

namespace {

enum : unsigned char {
  kToken = 1,  // tchar (RFC 9110 §5.6.2): a field name, a Connection option
  kText = 2,   // field-vchar, SP or HTAB (RFC 9112 §4, §5.5): a field value, a reason phrase
};

constexpr std::array<unsigned char, 256> make_classes() {
  std::array<unsigned char, 256> c{};
  for (int i = 0x21; i < 0x7f; ++i) c[i] = kText;
  for (int i = 0x80; i < 0x100; ++i) c[i] = kText;  // obs-text
  c[' '] = c['\t'] = kText;
  for (int i = '0'; i <= '9'; ++i) c[i] |= kToken;
  for (int i = 'a'; i <= 'z'; ++i) c[i] |= kToken;
  for (int i = 'A'; i <= 'Z'; ++i) c[i] |= kToken;
  for (char ch : std::string_view("!#$%&'*+-.^_`|~")) c[static_cast<unsigned char>(ch)] |= kToken;
  return c;
}

constexpr std::array<unsigned char, 256> kClass = make_classes();

bool is(char ch, unsigned char what) {
  return (kClass[static_cast<unsigned char>(ch)] & what) != 0;
}

enum class Step { kOk, kMore, kFallback };

// The first byte at or after `p` that is not text (a field value's or a reason's), or `end`.
// Where SSE2 is (every x86-64), 16 bytes a step: a byte under SP or DEL stops it, and a tab
// (text, though under SP) is stepped over.
const char* skip_text(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(' ');
  const __m128i del = _mm_set1_epi8(0x7f);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i from_space = _mm_cmpeq_epi8(_mm_max_epu8(v, space), v);  // v >= SP
    const auto text = static_cast<unsigned>(_mm_movemask_epi8(from_space)) &
                      ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, del)));
    const unsigned stop = ~text & 0xffffu;
    if (stop == 0) {
      p += 16;
      continue;
    }
    p += std::countr_zero(stop);
    if (*p != '\t') return p;
    ++p;
  }
#endif
  while (p < end && is(*p, kText)) ++p;
  return p;
}

#if defined(__SSSE3__)
// tchar as two 16-byte tables for PSHUFB: by a byte's low nibble, the bit of each high nibble
// (0-7) that makes it a tchar; by its high nibble, that bit (none from 8 up: not ASCII).
constexpr std::array<unsigned char, 16> token_by_low_nibble() {
  std::array<unsigned char, 16> t{};
  for (int lo = 0; lo < 16; ++lo) {
    for (int hi = 0; hi < 8; ++hi) {
      if ((kClass[hi * 16 + lo] & kToken) != 0) t[lo] |= static_cast<unsigned char>(1u << hi);
    }
  }
  return t;
}
constexpr std::array<unsigned char, 16> kTokenByLow = token_by_low_nibble();
constexpr std::array<unsigned char, 16> kTokenByHigh = {1, 2, 4, 8, 16, 32, 64, 128};
#endif

// The first byte at or after `p` that is not a tchar, or `end`. With SSSE3 (the release build's
// x86-64-v2), 16 bytes a step through the nibble tables. (Not SSE4.2's PCMPESTRI over ranges,
// as picohttpparser does: valgrind, which bench-instructions counts with, cannot run it.)
const char* skip_token(const char* p, const char* end) {
#if defined(__SSSE3__)
  const __m128i by_low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kTokenByLow.data()));
  const __m128i by_high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kTokenByHigh.data()));
  const __m128i nibble = _mm_set1_epi8(0x0f);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i low = _mm_and_si128(v, nibble);
    const __m128i high = _mm_and_si128(_mm_srli_epi16(v, 4), nibble);
    const __m128i token =
        _mm_and_si128(_mm_shuffle_epi8(by_low, low), _mm_shuffle_epi8(by_high, high));
    const auto other =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(token, _mm_setzero_si128())));
    if (other != 0) return p + std::countr_zero(other);
    p += 16;
  }
#endif
  while (p < end && is(*p, kToken)) ++p;
  return p;
}

// Advances `p` over text to the line's CRLF and past it; `line_end` is where the CR was.
Step to_line_end(const char*& p, const char* end, const char*& line_end) {
  p = skip_text(p, end);
  if (p == end) return Step::kMore;
  if (*p != '\r') return Step::kFallback;  // a CTL, DEL or a bare LF
  if (p + 1 == end) return Step::kMore;
  if (p[1] != '\n') return Step::kFallback;
  line_end = p;
  p += 2;
  return Step::kOk;
}

bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

// "HTTP/1.1 200 OK\r\n": the version, a final status (1xx and 101 are left to the parser, which
// knows what each asks of the connection) and the reason as sent.
Step status_line(const char*& p, const char* end, ResponseHead& head) {
  constexpr std::string_view kPrefix = "HTTP/1.";
  if (end - p < 13) return Step::kMore;
  if (std::string_view(p, kPrefix.size()) != kPrefix) return Step::kFallback;
  if ((p[7] != '0' && p[7] != '1') || p[8] != ' ' || p[12] != ' ') return Step::kFallback;
  if (!is_digit(p[9]) || !is_digit(p[10]) || !is_digit(p[11])) return Step::kFallback;
  head.version = p[7] == '1' ? 11 : 10;
  head.status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
  if (head.status < 200 || head.status > 599) return Step::kFallback;
  p += 13;
  const char* reason = p;
  const char* line_end = nullptr;
  const Step step = to_line_end(p, end, line_end);
  if (step == Step::kOk) head.reason = std::string_view(reason, line_end - reason);
  return step;
}

// One "name: value\r\n" line. A name not followed at once by ':' (a space before it, an empty
// name, a line that starts with whitespace: obs-fold) is left to the parser.
Step field_line(const char*& p, const char* end, HeadField& field) {
  const char* name = p;
  p = skip_token(p, end);
  if (p == end) return Step::kMore;
  if (*p != ':' || p == name) return Step::kFallback;
  field.name = std::string_view(name, p - name);
  ++p;
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  const char* value = p;
  const char* line_end = nullptr;
  const Step step = to_line_end(p, end, line_end);
  if (step != Step::kOk) return step;
  // A line that goes on after its CRLF (obs-fold) cannot be told apart until the next byte.
  if (p == end) return Step::kMore;
  if (*p == ' ' || *p == '\t') return Step::kFallback;
  while (line_end > value && (line_end[-1] == ' ' || line_end[-1] == '\t')) --line_end;
  field.value = std::string_view(value, line_end - value);
  return Step::kOk;
}

// Whether the token `s` is `lower` in any case. Inline and by the literal's length: this runs
// for every field. (OR-ing 0x20 maps an upper-case letter to its lower case, and no other tchar
// onto a letter or '-'.)
template <std::size_t N>
bool is_named(std::string_view s, const char (&lower)[N]) {
  if (s.size() != N - 1) return false;
  for (std::size_t i = 0; i + 1 < N; ++i) {
    if ((s[i] | 0x20) != lower[i]) return false;
  }
  return true;
}

// Content-Length: digits only and no overflow; a list, a sign or a space inside is the parser's.
bool parse_length(std::string_view v, std::uint64_t& out) {
  if (v.empty()) return false;
  std::uint64_t n = 0;
  for (const char ch : v) {
    if (!is_digit(ch)) return false;
    const auto d = static_cast<std::uint64_t>(ch - '0');
    if (n > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    n = n * 10 + d;
  }
  out = n;
  return true;
}

// The options of a Connection (or Proxy-Connection) value: each a token between commas with
// optional whitespace; an empty element or any other character is the parser's to judge.
bool connection_options(std::string_view v, bool& close, bool& keep_alive) {
  for (;;) {
    const auto comma = v.find(',');
    const std::string_view option = trim_ows(v.substr(0, comma));
    if (option.empty()) return false;
    for (const char ch : option) {
      if (!is(ch, kToken)) return false;
    }
    if (is_named(option, "close")) close = true;
    if (is_named(option, "keep-alive")) keep_alive = true;
    if (comma == std::string_view::npos) return true;
    v.remove_prefix(comma + 1);
  }
}

// What the fields say about framing and the connection.
struct Framing {
  bool close = false;
  bool keep_alive = false;
};

// Looks at a field that frames the message; false: one the scanner leaves to the parser.
bool note_field(const HeadField& f, ResponseHead& head, Framing& framing) {
  switch (f.name.size()) {
    case 10:  // Connection
    case 16:  // Proxy-Connection (Beast reads it as Connection)
      if (is_named(f.name, "connection") || is_named(f.name, "proxy-connection")) {
        return connection_options(f.value, framing.close, framing.keep_alive);
      }
      return true;
    case 14:  // Content-Length
      if (!is_named(f.name, "content-length")) return true;
      if (head.content_length) return false;
      head.content_length.emplace();
      return parse_length(f.value, *head.content_length);
    case 17:  // Transfer-Encoding: chunked or to EOF, both the parser's
      return !is_named(f.name, "transfer-encoding");
    default:
      return true;
  }
}

// Beast keeps fields of one name together: a field whose name came before, with other fields
// in between, goes after the first ones, so the relayed head would differ from the fast path's
// in order. Such a head (rare: Set-Cookie split by another field) is left to the parser.
// `seen` is a 64-bit sketch of the names so far; only a name it may hold is looked for.
bool repeats_apart(std::span<const HeadField> before, const HeadField& f, std::uint64_t& seen) {
  const auto lower = [](char ch) { return static_cast<std::uint64_t>(ch | 0x20); };
  const std::size_t size = f.name.size();
  const std::uint64_t key =
      (std::uint64_t{size} << 16) | (lower(f.name[0]) << 8) | lower(f.name[size - 1]);
  const std::uint64_t mask = std::uint64_t{1} << ((key * 0x9E3779B97F4A7C15u) >> 58);
  const bool maybe = (seen & mask) != 0;
  seen |= mask;
  if (!maybe) return false;
  const auto same = [&](const HeadField& b) {
    return b.name.size() == size && iequals(b.name, f.name);
  };
  if (same(before.back())) return false;
  for (const HeadField& b : before) {
    if (same(b)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string_view> ResponseHead::find(std::string_view name) const {
  for (const HeadField& f : fields) {
    if (iequals(f.name, name)) return f.value;
  }
  return std::nullopt;
}

HeadScan ResponseHeadScanner::scan(std::string_view bytes, bool head_request,
                                   std::size_t max_bytes) {
  const bool capped = bytes.size() >= max_bytes;
  if (capped) bytes = bytes.substr(0, max_bytes);
  const auto more = [&] { return capped ? HeadScan::kFallback : HeadScan::kNeedMore; };
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  head_ = ResponseHead{};
  Step step = status_line(p, end, head_);
  if (step != Step::kOk) return step == Step::kMore ? more() : HeadScan::kFallback;
  Framing framing;
  std::size_t n = 0;
  std::uint64_t seen = 0;
  for (;;) {
    if (end - p < 2) return more();
    if (p[0] == '\r') {
      if (p[1] != '\n') return HeadScan::kFallback;
      p += 2;
      break;
    }
    if (n == fields_.size()) return HeadScan::kFallback;
    step = field_line(p, end, fields_[n]);
    if (step != Step::kOk) return step == Step::kMore ? more() : HeadScan::kFallback;
    if (!note_field(fields_[n], head_, framing)) return HeadScan::kFallback;
    if (repeats_apart({fields_.data(), n}, fields_[n], seen)) return HeadScan::kFallback;
    ++n;
  }
  if (has_body(head_.status, head_request) && !head_.content_length) {
    return HeadScan::kFallback;  // a body to EOF
  }
  head_.keep_alive = head_.version == 11 ? !framing.close : framing.keep_alive;
  head_.fields = std::span<const HeadField>(fields_.data(), n);
  size_ = static_cast<std::size_t>(p - bytes.data());
  return HeadScan::kDone;
}

void ResponseHeadScanner::moved(const char* from, const char* to) {
  const auto follow = [&](std::string_view& v) {
    if (!v.empty()) v = std::string_view(to + (v.data() - from), v.size());
  };
  follow(head_.reason);
  for (std::size_t i = 0; i < head_.fields.size(); ++i) {
    follow(fields_[i].name);
    follow(fields_[i].value);
  }
}

}  // namespace sluice::proto::http
