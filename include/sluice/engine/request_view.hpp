// A request as the rules see it, and the lookups keys are made of: header, query parameter,
// cookie, and the client address behind trusted proxies. Frontends fill it with views.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

// The client address for keys and logs: the peer, unless the peer is a trusted proxy; then
// X-Forwarded-For (else Forwarded: for=) is walked from the right, skipping trusted proxies,
// and the first untrusted address is the client (nginx realip with real_ip_recursive on).
std::string client_address(const RequestView& request, std::span<const config::Cidr> trusted);

bool cidr_contains(const config::Cidr& net, std::string_view address);

// The rule's key for this request: its parts joined with '|'; nullopt when a header, query
// parameter or cookie it needs is missing.
std::optional<std::string> request_key(std::span<const config::KeyPart> parts, const RequestView& r,
                                       std::string_view client, std::string_view route);

}  // namespace sluice::engine
