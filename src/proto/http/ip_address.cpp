// IP addresses and networks (ip_address.hpp).
#include "sluice/proto/http/ip_address.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sluice/core/time.hpp"
#include "sluice/core/utf8.hpp"
#include "sluice/proto/http/field_values.hpp"

namespace sluice::proto::http {
namespace {

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool parse_ip(int family, std::string_view text, unsigned char* out) {
  char buf[64];
  if (text.empty() || text.size() >= sizeof buf) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = 0;
  return inet_pton(family, buf, out) == 1;
}

bool IpAddress::parse(std::string_view text) {
  len_ = 0;
  text = trim_ows(text);
  if (!text.empty() && text.front() == '"') {  // a quoted Forwarded node
    if (text.size() < 2 || text.back() != '"') return false;
    text = text.substr(1, text.size() - 2);
  }
  if (!text.empty() && text.front() == '[') {  // [v6] or [v6]:port
    const auto close = text.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !all_digits(rest.substr(1)))) return false;
    text = text.substr(1, close - 1);
  } else if (const auto colon = text.find(':');
             colon != std::string_view::npos &&
             text.find(':', colon + 1) == std::string_view::npos) {
    text = text.substr(0, colon);  // IPv4 with a port
  }
  if (parse_ip(AF_INET, text, bytes_)) {
    // glibc takes only a.b.c.d, decimal, without leading zeros: the text is already canonical.
    v6_ = false;
    std::memcpy(buf_, text.data(), text.size());
    buf_[text.size()] = 0;
    len_ = text.size();
    return true;
  }
  if (!parse_ip(AF_INET6, text, bytes_)) return false;
  static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  v6_ = std::memcmp(bytes_, kMapped, 12) != 0;
  if (!v6_) std::memmove(bytes_, bytes_ + 12, 4);
  if (inet_ntop(v6_ ? AF_INET6 : AF_INET, bytes_, buf_, sizeof buf_) == nullptr) return false;
  len_ = std::strlen(buf_);
  return true;
}

void IpAddress::keep_prefix(int bits) {
  const int width = v6_ ? 128 : 32;
  if (len_ == 0 || bits >= width) return;
  for (int i = 0; i < width / 8; ++i) {
    const int keep = std::clamp(bits - 8 * i, 0, 8);
    bytes_[i] &= static_cast<unsigned char>(0xff00u >> keep);
  }
  if (inet_ntop(v6_ ? AF_INET6 : AF_INET, bytes_, buf_, sizeof buf_) == nullptr) return;
  len_ = std::strlen(buf_);
  const int n = std::snprintf(buf_ + len_, sizeof buf_ - len_, "/%d", bits);
  if (n > 0) len_ += static_cast<std::size_t>(n);
}

bool Cidr::contains(const IpAddress& address) const {
  if (address.text().empty() || address.v6() != v6) return false;
  const unsigned char* ip = address.bytes();
  const int full = prefix / 8;
  if (std::memcmp(ip, bytes, static_cast<std::size_t>(full)) != 0) return false;
  const int rest = prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (ip[full] & mask) == (bytes[full] & mask);
}

core::Expected<Cidr> parse_cidr(std::string_view text) {
  auto fail = [&](const std::string& why) {
    return core::make_error("network '" + core::printable(text) + "' " + why);
  };
  const auto slash = text.find('/');
  const std::string_view address = text.substr(0, slash);
  Cidr c;
  c.text = std::string(text);
  int max = 32;
  if (!parse_ip(AF_INET, address, c.bytes)) {
    if (!parse_ip(AF_INET6, address, c.bytes)) {
      return fail(
          "is not an IPv4 or IPv6 address with an optional /prefix (e.g. 10.0.0.0/8, "
          "::1/128)");
    }
    c.v6 = true;
    max = 128;
  }
  c.prefix = max;
  if (slash != std::string_view::npos) {
    auto n = core::parse_count(text.substr(slash + 1), "prefix");
    if (!n || *n > max) {
      return fail("has a bad prefix length (accepted: /0 to /" + std::to_string(max) + ")");
    }
    c.prefix = static_cast<int>(*n);
  }
  unsigned char masked[16] = {};
  bool host_bits = false;
  for (int i = 0; i < max / 8; ++i) {
    const int keep = std::clamp(c.prefix - i * 8, 0, 8);
    const auto mask = static_cast<unsigned char>(keep == 0 ? 0 : 0xff << (8 - keep));
    masked[i] = static_cast<unsigned char>(c.bytes[i] & mask);
    host_bits = host_bits || masked[i] != c.bytes[i];
  }
  if (host_bits) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(c.v6 ? AF_INET6 : AF_INET, masked, buf, sizeof buf);
    return fail("has address bits set after the /" + std::to_string(c.prefix) +
                " prefix; did you mean " + buf + "/" + std::to_string(c.prefix) + "?");
  }
  return c;
}

}  // namespace sluice::proto::http
