// The network address syntaxes of the config (loader.hpp, internal.hpp): listener endpoints,
// and the host names they accept; also the flags that override them (networks: proto/http).
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

}  // namespace sluice::config
