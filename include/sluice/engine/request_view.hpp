// An HTTP request as the engine sees it, filled by the gateway with views into its own
// buffers, and the lookups keys are made of: header, query parameter, cookie, client address.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "sluice/config/rule_set.hpp"

namespace sluice::engine {

struct Header {
  std::string_view name;
  std::string_view value;
};

struct RequestView {
  std::string_view method;
  std::string_view host;   // the routing host: lower case, a port is ignored
  std::string_view path;   // the target before '?', normalized (proto/http/request_target)
  std::string_view query;  // the target after '?', may be empty
  std::string_view peer;   // the socket peer's address ("127.0.0.1", "::1")
  std::span<const Header> headers;
};

// ASCII case-insensitive equality (header names, hosts, methods).
bool iequals(std::string_view a, std::string_view b);

// The first header of that name (case-insensitive).
std::optional<std::string_view> find_header(const RequestView& r, std::string_view name);
// The first `name=value` of the query string, value as sent (not percent-decoded).
std::optional<std::string_view> query_param(std::string_view query, std::string_view name);
// The first cookie of that name in the Cookie header(s).
std::optional<std::string_view> cookie(const RequestView& r, std::string_view name);
// Host without a port, as sent.
std::string_view host_without_port(std::string_view host);

// An address in its one canonical text: IPv4 dotted quad, IPv6 as inet_ntop writes it (lower
// case, zeros compressed), an IPv4-mapped IPv6 as IPv4. Room for the longest of them.
class CanonicalAddress {
 public:
  // Parses "192.0.2.7", "192.0.2.7:8080", "2001:db8::1", "[2001:db8::1]:8080", a quoted or
  // bracketed Forwarded node; false for anything else ("unknown", "_hidden", "garbage").
  bool parse(std::string_view text);
  std::string_view text() const { return {buf_, len_}; }
  bool v6() const { return v6_; }
  const unsigned char* bytes() const { return bytes_; }  // 4 or 16

 private:
  char buf_[48] = {};
  std::size_t len_ = 0;
  bool v6_ = false;
  unsigned char bytes_[16] = {};
};

bool cidr_contains(const config::Cidr& net, const CanonicalAddress& address);

// The client address for keys and logs: the peer, unless the peer is a trusted proxy; then
// X-Forwarded-For (else Forwarded: for=, else X-Real-IP) is walked from the right, skipping
// trusted proxies, and the first untrusted address is the client (nginx realip with
// real_ip_recursive on). A hop that is not an address ends the walk: the client is then the
// trusted proxy that sent it, never a value further left that the client could have chosen.
// A port is dropped and the address canonicalized, so one client is one key.
void client_address(const RequestView& request, std::span<const config::Cidr> trusted,
                    CanonicalAddress& out);

}  // namespace sluice::engine
