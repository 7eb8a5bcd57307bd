// UTF-8 checks (sluice/core/utf8.hpp), after RFC 3629's table of well-formed byte sequences.
#include "sluice/core/utf8.hpp"

#include <cstdio>

namespace sluice::core {
namespace {

// The length of the well-formed sequence at `at`, or 0.
std::size_t sequence_at(std::string_view s, std::size_t at) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(at);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80;  // the range of the second byte, which RFC 3629 narrows for some b0
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (at + n > s.size()) return 0;
  if (byte(at + 1) < lo || byte(at + 1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return n;
}

std::string hex_byte(unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02X", c);
  return buf;
}

}  // namespace

std::optional<std::size_t> invalid_utf8_at(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = sequence_at(text, at);
    if (n == 0) return at;
    at += n;
  }
  return std::nullopt;
}

std::string invalid_utf8_problem(std::string_view text) {
  const std::size_t at = invalid_utf8_at(text).value_or(0);
  char buf[64];
  std::snprintf(buf, sizeof buf, "is not valid UTF-8 (byte 0x%02X at offset %zu)",
                at < text.size() ? static_cast<unsigned char>(text[at]) : 0u, at);
  return buf;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = sequence_at(text, at);
    const auto c = static_cast<unsigned char>(text[at]);
    if (n == 0 || c < 0x20 || c == 0x7F) {
      out += hex_byte(c);
      ++at;
      continue;
    }
    out.append(text.substr(at, n));
    at += n;
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace sluice::core
