// An HTTP request as the engine sees it, filled by the gateway with views into its own
// buffers, and what keys are made of: a header, a cookie, the client address behind trusted
// proxies (the syntax of each is proto/http's; the choice and the trust walk are the engine's).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "sluice/config/rule_set.hpp"
#include "sluice/proto/http/ip_address.hpp"

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
  // `peer` parsed, by a frontend that keeps it for a connection's requests (null: parsed here
  // each time it is needed).
  const proto::http::IpAddress* peer_address = nullptr;
};

// The first header of that name (case-insensitive).
std::optional<std::string_view> find_header(const RequestView& r, std::string_view name);
// The first cookie of that name in the Cookie header(s).
std::optional<std::string_view> cookie(const RequestView& r, std::string_view name);

// A client address in its one canonical text (proto/http parses it).
using CanonicalAddress = proto::http::IpAddress;

// The client address for keys and logs: the peer, unless the peer is a trusted proxy; then
// X-Forwarded-For (else Forwarded: for=, else X-Real-IP) is walked from the right, skipping
// trusted proxies, and the first untrusted address is the client (nginx realip with
// real_ip_recursive on). A hop that is not an address ends the walk: the client is then the
// trusted proxy that sent it, never a value further left that the client could have chosen.
// A port is dropped and the address canonicalized, so one client is one key.
void client_address(const RequestView& request, std::span<const config::Cidr> trusted,
                    CanonicalAddress& out);

// Whether the socket peer itself is in `trusted` (a proxy whose attributes, a rule's tier
// among them, are believed).
bool trusted_peer(const RequestView& request, std::span<const config::Cidr> trusted);

}  // namespace sluice::engine
