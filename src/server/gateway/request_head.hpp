// A request head as routes, keys and the upstream must all see it: the normalized target and
// the one routing host (RFC 9112 §3.2), or a refusal. A pure function of the parsed head, apart
// from the connection, so that unit tests and the fuzzer (tests/fuzz/http_fuzz.cpp) run the
// gateway's own code.
#pragma once

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <string>
#include <string_view>

#include "sluice/engine/request_view.hpp"
#include "sluice/proto/http/request_target.hpp"

namespace sluice::server::gateway {

// Where the parts of a head's target live while the request is served; reused across requests
// so that a normal head allocates nothing.
struct HeadTarget {
  proto::http::TargetParts parts;  // the request's target as forwarded
  std::string path_scratch;        // where parts.path lives when it was rewritten
  std::string host_scratch;        // where the routing host lives when it was lower-cased
};

// Fills `view` (method, host, path, query) from `req` as routes must see it: the normalized
// path into `out.parts`, the routing host from the absolute-form authority, else from the one
// Host field. False when the head gets 400: a target that cannot be normalized, two Host
// fields, none on HTTP/1.1 without an authority, or a Host that is empty or not a host.
template <class Fields>
bool read_request_head(const boost::beast::http::request_header<Fields>& req,
                       proto::http::EscapedSlashes slashes, HeadTarget& out,
                       engine::RequestView& view) {
  namespace http = boost::beast::http;
  namespace ph = proto::http;
  if (ph::normalize_target(req.target(), slashes, out.path_scratch, out.parts) !=
      ph::TargetError::kNone) {
    return false;
  }
  // RFC 9112 §3.2: one Host, required on HTTP/1.1; an absolute-form target's authority
  // replaces it (§3.2.2), so routing and the upstream see the same host.
  // One walk over the fields (a head has few): Beast's count() and find() each look a name up
  // by its text, case-insensitively.
  std::size_t hosts = 0;
  std::string_view host;
  for (const auto& f : req) {
    if (f.name() == http::field::host && hosts++ == 0) host = f.value();
  }
  if (hosts > 1) return false;
  if (hosts == 0 && out.parts.authority.empty() && req.version() >= 11) return false;
  // A Host field is a host even beside an absolute-form target, and never empty (nginx: 400).
  view.host = {};
  if (hosts == 1 && !ph::routing_host(host, out.host_scratch, view.host)) return false;
  if (!out.parts.authority.empty() &&
      !ph::routing_host(out.parts.authority, out.host_scratch, view.host)) {
    return false;
  }
  view.method = req.method_string();
  view.path = out.parts.path;
  view.query = out.parts.query;
  return true;
}

}  // namespace sluice::server::gateway
