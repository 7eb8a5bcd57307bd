// The network address syntaxes of the config (loader.hpp, internal.hpp): listener endpoints,
// trusted-proxy networks, and the host names both accept; also the flags that override them.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "internal.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/core/time.hpp"

namespace sluice::config {
namespace {

bool is_host_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t dot = std::min(s.find('.', start), s.size());
    const std::string_view label = s.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-') return false;
    }
    start = dot + 1;
  }
  return true;
}

bool looks_like_ipv4(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

}  // namespace

// A host as written before an endpoint's port: a name or an IPv4 address (endpoints bracket
// IPv6 themselves). Returns the problem, or nothing.
std::optional<std::string> internal::host_problem(std::string_view host) {
  unsigned char buf[16];
  if (looks_like_ipv4(host)) {
    if (!parse_ip(AF_INET, host, buf)) return "'" + std::string(host) + "' is not an IPv4 address";
    return std::nullopt;
  }
  if (!is_host_name(host)) {
    return "'" + std::string(host) +
           "' is not a host name (letters, digits, '-' and '.') or an IP address";
  }
  return std::nullopt;
}

core::Expected<Endpoint> parse_endpoint(std::string_view text) {
  auto fail = [&](const std::string& why) {
    return core::make_error("address " + internal::quoted(text) + " " + why);
  };
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return fail("has '[' without ']' (e.g. [::1]:8080)");
    host = text.substr(1, close - 1);
    if (text.substr(close + 1, 1) != ":") return fail("needs a port after ']' (e.g. [::1]:8080)");
    port = text.substr(close + 2);
    unsigned char buf[16];
    if (!internal::parse_ip(AF_INET6, host, buf)) return fail("has an invalid IPv6 address");
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return fail("needs a port (e.g. 127.0.0.1:8080, or :8080 for all addresses)");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return fail("looks like IPv6: put the address in brackets (e.g. [::1]:8080)");
    }
    if (!host.empty()) {
      if (auto p = internal::host_problem(host)) return fail("has a bad host: " + *p);
    }
  }
  auto n = core::parse_count(port, "port");
  if (!n || *n < 1 || *n > 65535) {
    return fail("has port " + internal::quoted(port) + " (accepted: 1 to 65535)");
  }
  return Endpoint{std::string(host), static_cast<std::uint16_t>(*n)};
}

std::string format_endpoint(const Endpoint& e) {
  const bool v6 = e.host.find(':') != std::string::npos;
  return (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

core::Expected<Cidr> parse_cidr(std::string_view text) {
  auto fail = [&](const std::string& why) {
    return core::make_error("network " + internal::quoted(text) + " " + why);
  };
  const auto slash = text.find('/');
  const std::string_view address = text.substr(0, slash);
  Cidr c;
  c.text = std::string(text);
  int max = 32;
  if (!internal::parse_ip(AF_INET, address, c.bytes)) {
    if (!internal::parse_ip(AF_INET6, address, c.bytes)) {
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

}  // namespace sluice::config
