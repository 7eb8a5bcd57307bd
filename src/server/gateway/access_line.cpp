// format_access_line, request ids (access_line.hpp).
#include "access_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
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
  for (const char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      append_hex_byte(out, c);
    } else {
      out += ch;
    }
  }
}

void append_ms(std::string& out, double ms) {
  out += ' ';
  if (ms < 0) {
    out += '-';
    return;
  }
  fmt::format_to(std::back_inserter(out), "{:.1f}", ms);
}

// 2024-05-01T12:00:00.123Z, into `out` (at least kTimeBytes).
constexpr std::size_t kTimeBytes = 32;
std::string_view format_time(std::int64_t ms, char* out) {
  const auto secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  const auto r = fmt::format_to_n(out, kTimeBytes, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                  tm.tm_min, tm.tm_sec, ms % 1000);
  return {out, std::min(r.size, kTimeBytes)};
}

void format_text(const AccessFields& f, std::string& out) {
  char time[kTimeBytes];
  out += format_time(f.time_ms, time);
  for (const std::string_view v : {f.client, f.request_id, f.method, f.target}) {
    append_column(out, v);
  }
  fmt::format_to(std::back_inserter(out), " {} {}", f.status, f.bytes);
  for (const std::string_view v : {f.route, f.outcome, f.rule, f.key}) append_column(out, v);
  append_ms(out, f.delay_ms);
  append_column(out, f.upstream);
  append_ms(out, f.upstream_ms);
  append_column(out, f.dry_run);
  out += '\n';
}

// A text as a JSON string value (null when empty), valid UTF-8 whatever the bytes were.
boost::json::value json_text(std::string_view v, boost::json::storage_ptr sp) {
  if (v.empty()) return nullptr;
  if (!core::invalid_utf8_at(v)) return boost::json::string(v, std::move(sp));
  std::string clean;
  for (const char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      append_hex_byte(clean, c);
    } else {
      clean += ch;
    }
  }
  return boost::json::string(clean, std::move(sp));
}

boost::json::value json_ms(double ms) {
  if (ms < 0) return nullptr;
  return static_cast<double>(static_cast<std::int64_t>(ms * 10 + 0.5)) / 10;  // 0.1 ms
}

void format_json(const AccessFields& f, std::string& out) {
  // The object and its texts live in this buffer: a line of usual size allocates nothing.
  std::array<unsigned char, 4096> buffer;
  boost::json::monotonic_resource mr(buffer.data(), buffer.size());
  boost::json::storage_ptr sp(&mr);
  char time[kTimeBytes];
  boost::json::object o(sp);
  o.reserve(15);
  o.emplace("time", boost::json::string(format_time(f.time_ms, time), sp));
  o.emplace("client", json_text(f.client, sp));
  o.emplace("request_id", json_text(f.request_id, sp));
  o.emplace("method", json_text(f.method, sp));
  o.emplace("target", json_text(f.target, sp));
  o.emplace("status", f.status);
  o.emplace("bytes", f.bytes);
  o.emplace("route", json_text(f.route, sp));
  o.emplace("outcome", json_text(f.outcome, sp));
  o.emplace("rule", json_text(f.rule, sp));
  o.emplace("key", json_text(f.key, sp));
  o.emplace("delay_ms", json_ms(f.delay_ms));
  o.emplace("upstream", json_text(f.upstream, sp));
  o.emplace("upstream_ms", json_ms(f.upstream_ms));
  o.emplace("dry_run", json_text(f.dry_run, sp));
  boost::json::serializer sr;
  sr.reset(&o);
  char piece[1024];
  while (!sr.done()) out += std::string_view(sr.read(piece));
  out += '\n';
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
