// The heads the gateway writes: the request it sends upstream, the response it relays to the
// client, and its own local responses. Hop-by-hop fields (RFC 9110 7.6.1: Connection, the fields
// Connection names, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, Proxy-Connection) are
// not relayed; each hop gets its own framing. Bodies are not touched here.
#pragma once

#include <boost/beast/http/message.hpp>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "fields_arena.hpp"
#include "sluice/proto/http/request_target.hpp"
#include "sluice/proto/http/response_head.hpp"

namespace sluice::server::gateway {

namespace http = boost::beast::http;

// How a body is delimited on one hop.
enum class Framing {
  kNone,     // no body (a request without one; HEAD, 1xx, 204, 304 responses)
  kLength,   // Content-Length
  kChunked,  // Transfer-Encoding: chunked
  kClose,    // until the connection closes (a response to an HTTP/1.0 client)
};

// Whole header lines ("Name: value\r\n") the gateway adds: the outcome's rate-limit fields.
using ExtraFields = std::string_view;

// The client's address as a Forwarded (RFC 7239) node: `for=192.0.2.7`, `for="[2001:db8::1]"`.
std::string forwarded_node(std::string_view peer);

// A field each hop states for itself (Connection, Transfer-Encoding, Content-Length, ...); by
// Beast's code or by name.
bool is_hop_by_hop(http::field f);
bool is_hop_by_hop(std::string_view name);

// The request line and fields for upstream: the normalized `target` in origin form, the
// client's fields less hop-by-hop ones and Expect (the gateway answers 100-continue itself),
// X-Forwarded-For with `peer` appended, Forwarded with `for=` appended, then the framing.
// Host is the absolute-form target's authority when there is one (RFC 9112 §3.2.2), else the
// client's; `host` stands in when the client sent none. A `request_id` replaces the client's
// X-Request-Id fields with one of that value.
void append_upstream_request_head(std::string& out, const http::request_header<Fields>& req,
                                  const proto::http::TargetParts& target, std::string_view peer,
                                  std::string_view forwarded_for, Framing framing,
                                  std::uint64_t length, std::string_view host,
                                  std::string_view request_id = {});

// The upstream's status and fields less hop-by-hop ones, then `extra` (the outcome's
// RateLimit fields), the framing, and Connection as `keep_alive` and the client's version need.
// `drop_request_id`: `extra` says X-Request-Id, so the upstream's is not relayed beside it.
// `drop`, when set, names more fields to leave out (a rule's cost_from header).
void append_relayed_response_head(std::string& out, const proto::http::ResponseHead& res,
                                  ExtraFields extra, Framing framing, std::uint64_t length,
                                  bool keep_alive, unsigned client_version,
                                  bool drop_request_id = false,
                                  const std::function<bool(std::string_view)>& drop = {});

// A response the gateway makes itself: status, text body length, `extra` fields (`typed`: they
// hold its Content-Type).
void append_local_response_head(std::string& out, int status, std::size_t body_length,
                                ExtraFields extra, bool keep_alive, unsigned client_version,
                                bool typed = false);

// The text body of the gateway's own answer with `status` (400, 404, 408, 413, 414, 431, 501,
// 502, 504); "" for any other.
std::string_view reason_body(int status);

// Whether the client waits for "100 Continue" before it sends the body.
bool expects_continue(const http::request_header<Fields>& req);

}  // namespace sluice::server::gateway
