// format_access_line, request ids (access_line.hpp).
#include "access_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/json/serializer.hpp>
#include <ctime>
#include <random>

#include "sluice/core/utf8.hpp"

namespace sluice::server::gateway {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

bool needs_escape(unsigned char c) { return c <= 0x20 || c >= 0x7f || c == '"' || c == '\\'; }

// One text column: never empty, never a space, a quote, a control byte or a line end.
void append_column(std::string& out, std::string_view v) {
  out += ' ';
  if (v.empty()) {
    out += '-';
    return;
  }
  if (v == "-") {
    out += "\\x2d";
    return;
  }
  const auto plain = std::find_if(
      v.begin(), v.end(), [](char ch) { return needs_escape(static_cast<unsigned char>(ch)); });
  if (plain == v.end()) {
    out += v;  // the usual case: one copy
    return;
  }
  for (const char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (needs_escape(c)) {
      append_hex_byte(out, c);
    } else {
      out += ch;
    }
  }
}

void append_number(std::string& out, std::uint64_t n) {
  const fmt::format_int text(n);
  out.append(text.data(), text.size());
}

// Milliseconds to 0.1 ms ("3.2"); `absent` for a negative value.
void append_ms(std::string& out, double ms, std::string_view absent) {
  if (ms < 0) {
    out += absent;
    return;
  }
  const auto tenths = static_cast<std::uint64_t>(ms * 10 + 0.5);
  append_number(out, tenths / 10);
  out += '.';
  out += static_cast<char>('0' + tenths % 10);
}

// 2024-05-01T12:00:00.123Z. The part to the second is kept per thread: a log writes many lines
// a second, and gmtime_r and formatting cost more than the line.
void append_time(std::string& out, std::int64_t ms) {
  struct Second {
    std::int64_t at = -1;
    char text[20] = {};  // "2024-05-01T12:00:00"
  };
  thread_local Second last;
  const std::int64_t secs = ms / 1000;
  if (secs != last.at) {
    const auto t = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    fmt::format_to_n(last.text, sizeof last.text - 1, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec);
    last.at = secs;
  }
  const auto milli = static_cast<int>(ms % 1000);
  out.append(last.text, 19);
  out += '.';
  out += static_cast<char>('0' + milli / 100);
  out += static_cast<char>('0' + milli / 10 % 10);
  out += static_cast<char>('0' + milli % 10);
  out += 'Z';
}

void format_text(const AccessFields& f, std::string& out) {
  append_time(out, f.time_ms);
  for (const std::string_view v : {f.client, f.request_id, f.method, f.target}) {
    append_column(out, v);
  }
  out += ' ';
  append_number(out, static_cast<std::uint64_t>(f.status));
  out += ' ';
  append_number(out, f.bytes);
  for (const std::string_view v : {f.route, f.outcome, f.rule, f.key}) append_column(out, v);
  out += ' ';
  append_ms(out, f.delay_ms, "-");
  append_column(out, f.upstream);
  out += ' ';
  append_ms(out, f.upstream_ms, "-");
  append_column(out, f.dry_run);
  out += '\n';
}

// A JSON string as Boost.JSON's serializer writes it (quotes and escapes), or null when empty.
// A text that is not valid UTF-8 has its bytes over 0x7f written \xHH first.
void append_json_text(std::string& out, boost::json::serializer& sr, std::string_view v) {
  if (v.empty()) {
    out += "null";
    return;
  }
  std::string clean;  // only for invalid UTF-8, which a usual line never has
  if (core::invalid_utf8_at(v)) {
    for (const char ch : v) {
      const auto c = static_cast<unsigned char>(ch);
      if (c >= 0x80) {
        append_hex_byte(clean, c);
      } else {
        clean += ch;
      }
    }
    v = clean;
  }
  sr.reset(boost::json::string_view(v.data(), v.size()));
  char piece[512];
  while (!sr.done()) out += std::string_view(sr.read(piece));
}

// One object, its fields in the order of the text columns. Boost.JSON writes every string;
// the numbers are written here, as "3.2" rather than Boost.JSON 1.81's "3.2E0".
void format_json(const AccessFields& f, std::string& out) {
  out += "{\"time\":\"";
  append_time(out, f.time_ms);
  out += '"';
  boost::json::serializer sr;  // one for the line's strings: it is not cheap to make
  const auto text = [&](std::string_view name, std::string_view v) {
    out += ",\"";
    out += name;
    out += "\":";
    append_json_text(out, sr, v);
  };
  text("client", f.client);
  text("request_id", f.request_id);
  text("method", f.method);
  text("target", f.target);
  out += ",\"status\":";
  append_number(out, static_cast<std::uint64_t>(f.status));
  out += ",\"bytes\":";
  append_number(out, f.bytes);
  text("route", f.route);
  text("outcome", f.outcome);
  text("rule", f.rule);
  text("key", f.key);
  out += ",\"delay_ms\":";
  append_ms(out, f.delay_ms, "null");
  text("upstream", f.upstream);
  out += ",\"upstream_ms\":";
  append_ms(out, f.upstream_ms, "null");
  text("dry_run", f.dry_run);
  out += "}\n";
}

}  // namespace

void format_access_line(const AccessFields& f, config::AccessLogFormat format, std::string& out) {
  if (format == config::AccessLogFormat::kJson) {
    format_json(f, out);
  } else {
    format_text(f, out);
  }
}

bool usable_request_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestId) return false;
  for (const char ch : id) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

void make_request_id(char (&out)[33]) {
  // splitmix64 over a per-thread seed: unique ids, not secrets (nginx's are no more).
  thread_local std::uint64_t state = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  for (int half = 0; half < 2; ++half) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    for (int i = 15; i >= 0; --i, z >>= 4) out[half * 16 + i] = kHex[z & 15];
  }
  out[32] = '\0';
}

}  // namespace sluice::server::gateway
