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

// The items of a comma-separated list, from the right: the order proxies appended them in,
// read back from the last hop.
template <class F>
bool each_from_right(std::string_view v, F&& f) {
  while (!v.empty()) {
    const auto comma = v.rfind(',');
    const std::string_view item = trim(comma == std::string_view::npos ? v : v.substr(comma + 1));
    if (!item.empty() && !f(item)) return false;
    if (comma == std::string_view::npos) break;
    v = v.substr(0, comma);
  }
  return true;
}

// The for= value of one Forwarded element ("for=192.0.2.7;proto=http"), or empty.
std::string_view forwarded_for(std::string_view element) {
  while (!element.empty()) {
    const auto semi = element.find(';');
    const std::string_view pair = trim(element.substr(0, semi));
    if (pair.size() > 4 && iequals(pair.substr(0, 4), "for=")) return pair.substr(4);
    if (semi == std::string_view::npos) break;
    element.remove_prefix(semi + 1);
  }
  return {};
}

bool trusted_address(const CanonicalAddress& a, std::span<const config::Cidr> trusted) {
  for (const auto& net : trusted) {
    if (cidr_contains(net, a)) return true;
  }
  return false;
}

// Calls f(address text) for each hop a header lists, right to left, over every field of that
// name (the last field holds the latest hops); stops when f returns false.
template <class F>
void hops_from_right(const RequestView& r, std::string_view name, bool forwarded, F&& f) {
  for (auto it = r.headers.rbegin(); it != r.headers.rend(); ++it) {
    if (!iequals(it->name, name)) continue;
    const bool go_on = each_from_right(it->value, [&](std::string_view item) {
      return f(forwarded ? forwarded_for(item) : item);
    });
    if (!go_on) return;
  }
}

bool has_header(const RequestView& r, std::string_view name) {
  for (const auto& h : r.headers) {
    if (iequals(h.name, name)) return true;
  }
  return false;
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

bool CanonicalAddress::parse(std::string_view text) {
  len_ = 0;
  text = trim(text);
  if (!text.empty() && text.front() == '"') {  // a quoted Forwarded node
    if (text.size() < 2 || text.back() != '"') return false;
    text = text.substr(1, text.size() - 2);
  }
  if (!text.empty() && text.front() == '[') {  // [v6] or [v6]:port
    const auto close = text.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty() &&
        (rest.front() != ':' ||
         !std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; }))) {
      return false;
    }
    text = text.substr(1, close - 1);
  } else if (const auto colon = text.find(':');
             colon != std::string_view::npos &&
             text.find(':', colon + 1) == std::string_view::npos) {
    text = text.substr(0, colon);  // IPv4 with a port
  }
  char buf[64];
  if (text.empty() || text.size() >= sizeof buf) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = 0;
  if (inet_pton(AF_INET, buf, bytes_) == 1) {
    // glibc takes only a.b.c.d, decimal, without leading zeros: the text is already canonical.
    v6_ = false;
    std::memcpy(buf_, buf, text.size() + 1);
    len_ = text.size();
    return true;
  }
  if (inet_pton(AF_INET6, buf, bytes_) == 1) {
    static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    v6_ = std::memcmp(bytes_, kMapped, 12) != 0;
    if (!v6_) std::memmove(bytes_, bytes_ + 12, 4);
  } else {
    return false;
  }
  if (inet_ntop(v6_ ? AF_INET6 : AF_INET, bytes_, buf_, sizeof buf_) == nullptr) return false;
  len_ = std::strlen(buf_);
  return true;
}

bool cidr_contains(const config::Cidr& net, const CanonicalAddress& address) {
  if (address.text().empty() || address.v6() != net.v6) return false;
  const unsigned char* ip = address.bytes();
  const int full = net.prefix / 8;
  if (std::memcmp(ip, net.bytes, static_cast<std::size_t>(full)) != 0) return false;
  const int rest = net.prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (ip[full] & mask) == (net.bytes[full] & mask);
}

void client_address(const RequestView& request, std::span<const config::Cidr> trusted,
                    CanonicalAddress& out) {
  if (!out.parse(request.peer) || trusted.empty() || !trusted_address(out, trusted)) return;
  CanonicalAddress hop;
  auto walk = [&](std::string_view name, bool forwarded) {
    hops_from_right(request, name, forwarded, [&](std::string_view item) {
      if (!hop.parse(item)) return false;  // not an address: the last trusted hop stands
      out = hop;
      return trusted_address(hop, trusted);  // the first untrusted hop is the client
    });
  };
  if (has_header(request, "X-Forwarded-For")) {
    walk("X-Forwarded-For", false);
  } else if (has_header(request, "Forwarded")) {
    walk("Forwarded", true);
  } else if (has_header(request, "X-Real-IP")) {
    walk("X-Real-IP", false);
  }
}

}  // namespace sluice::engine
