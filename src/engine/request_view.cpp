// Key lookups over a RequestView (request_view.hpp): headers, query, cookies, client address.
#include "sluice/engine/request_view.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace sluice::engine {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parses an address for CIDR matching: 4 or 16 bytes; an IPv4-mapped IPv6 becomes IPv4.
bool parse_ip(std::string_view text, unsigned char out[16], bool& v6) {
  char buf[64];
  if (text.size() >= sizeof buf) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = 0;
  if (inet_pton(AF_INET, buf, out) == 1) {
    v6 = false;
    return true;
  }
  if (inet_pton(AF_INET6, buf, out) == 1) {
    static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(out, kMapped, 12) == 0) {
      std::memmove(out, out + 12, 4);
      v6 = false;
    } else {
      v6 = true;
    }
    return true;
  }
  return false;
}

bool trusted_address(std::string_view address, std::span<const config::Cidr> trusted) {
  for (const auto& net : trusted) {
    if (cidr_contains(net, address)) return true;
  }
  return false;
}

// An address from a Forwarded for= value: unquoted, brackets and port removed.
std::string_view forwarded_node(std::string_view v) {
  v = trim(v);
  if (!v.empty() && v.front() == '"') v = v.substr(1, v.size() >= 2 ? v.size() - 2 : 0);
  if (!v.empty() && v.front() == '[') {
    const auto close = v.find(']');
    return close == std::string_view::npos ? v.substr(1) : v.substr(1, close - 1);
  }
  const auto colon = v.find(':');
  if (colon != std::string_view::npos && v.find(':', colon + 1) == std::string_view::npos) {
    return v.substr(0, colon);  // IPv4 with a port
  }
  return v;
}

// The addresses a header lists, left to right.
std::vector<std::string_view> forwarded_chain(const RequestView& r) {
  std::vector<std::string_view> chain;
  for (const auto& h : r.headers) {
    if (!iequals(h.name, "X-Forwarded-For")) continue;
    std::string_view v = h.value;
    while (!v.empty()) {
      const auto comma = v.find(',');
      const auto item = trim(v.substr(0, comma));
      if (!item.empty()) chain.push_back(item);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  if (!chain.empty()) return chain;
  for (const auto& h : r.headers) {
    if (!iequals(h.name, "Forwarded")) continue;
    std::string_view v = h.value;
    while (!v.empty()) {
      const auto sep = v.find_first_of(",;");
      const auto pair = trim(v.substr(0, sep));
      if (pair.size() > 4 && iequals(pair.substr(0, 4), "for=")) {
        chain.push_back(forwarded_node(pair.substr(4)));
      }
      if (sep == std::string_view::npos) break;
      v.remove_prefix(sep + 1);
    }
  }
  return chain;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

std::optional<std::string_view> find_header(const RequestView& r, std::string_view name) {
  for (const auto& h : r.headers) {
    if (iequals(h.name, name)) return h.value;
  }
  return std::nullopt;
}

std::optional<std::string_view> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto item = query.substr(0, amp);
    const auto eq = item.find('=');
    if (item.substr(0, eq) == name) {
      return eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

std::optional<std::string_view> cookie(const RequestView& r, std::string_view name) {
  for (const auto& h : r.headers) {
    if (!iequals(h.name, "Cookie")) continue;
    std::string_view v = h.value;
    while (!v.empty()) {
      const auto semi = v.find(';');
      const auto item = trim(v.substr(0, semi));
      const auto eq = item.find('=');
      if (eq != std::string_view::npos && item.substr(0, eq) == name) return item.substr(eq + 1);
      if (semi == std::string_view::npos) break;
      v.remove_prefix(semi + 1);
    }
  }
  return std::nullopt;
}

std::string_view host_without_port(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

bool cidr_contains(const config::Cidr& net, std::string_view address) {
  unsigned char ip[16];
  bool v6 = false;
  if (!parse_ip(address, ip, v6) || v6 != net.v6) return false;
  const int full = net.prefix / 8;
  if (std::memcmp(ip, net.bytes, static_cast<std::size_t>(full)) != 0) return false;
  const int rest = net.prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (ip[full] & mask) == (net.bytes[full] & mask);
}

std::string client_address(const RequestView& request, std::span<const config::Cidr> trusted) {
  if (trusted.empty() || !trusted_address(request.peer, trusted)) return std::string(request.peer);
  const auto chain = forwarded_chain(request);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!trusted_address(*it, trusted)) return std::string(*it);
  }
  // Every hop is trusted: the left-most one is the client as far as anyone can tell.
  return chain.empty() ? std::string(request.peer) : std::string(chain.front());
}

std::optional<std::string> request_key(std::span<const config::KeyPart> parts, const RequestView& r,
                                       std::string_view client, std::string_view route) {
  std::string key;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) key += '|';
    const config::KeyPart& p = parts[i];
    std::optional<std::string_view> v;
    switch (p.kind) {
      case config::KeyPart::Kind::kClientIp:
        v = client;
        break;
      case config::KeyPart::Kind::kHeader:
        v = find_header(r, p.name);
        break;
      case config::KeyPart::Kind::kQuery:
        v = query_param(r.query, p.name);
        break;
      case config::KeyPart::Kind::kCookie:
        v = cookie(r, p.name);
        break;
      case config::KeyPart::Kind::kPath:
        v = r.path;
        break;
      case config::KeyPart::Kind::kRoute:
        v = route;
        break;
      case config::KeyPart::Kind::kConst:
        v = p.name;
        break;
      case config::KeyPart::Kind::kMethod:
        v = r.method;
        break;
      case config::KeyPart::Kind::kHost:
        v = host_without_port(r.host);
        break;
    }
    // A missing or empty value from the request is a missing key, as nginx treats an empty
    // key: the request is not accounted (or, configured so, denied).
    if (!v || (v->empty() && p.kind != config::KeyPart::Kind::kConst)) return std::nullopt;
    key.append(*v);
  }
  return key;
}

}  // namespace sluice::engine
