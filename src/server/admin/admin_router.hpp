// The admin API's route table: one row per (method, path pattern) -> handler, like nginx's
// ngx_command_t, so a new endpoint (POST /v1/check, GET /v1/check/{rule}) is one more row.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "admin_access.hpp"
#include "admin_reply.hpp"

namespace sluice::server {

class AdminService;

struct AdminRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string_view path;   // the target before '?'
  std::string_view query;  // after '?', may be empty
  std::string_view body;
  std::string name;  // the {name} segment of the matched pattern, percent-decoded
  std::string key;   // the {key} segment, percent-decoded
  const ListenerInfo* listener = nullptr;  // the listener it came in on
  unsigned version = 11;                   // HTTP/1.x: 10 or 11
  std::optional<std::string_view> host;    // the (first) Host field, when sent
  bool repeated_host = false;              // more than one Host field
  std::string_view authorization;          // the Authorization field, "" when not sent
};

struct AdminRoute {
  boost::beast::http::verb method;
  // A literal path, or one with "{name}" and "{key}" segments, each matching one non-empty
  // path segment.
  std::string_view pattern;
  Reply (AdminService::*handler)(const AdminRequest&);
  // Where the row is served: the admin listener; the decision listener; or the decision API,
  // which the admin listener serves too unless the config says check_on_admin: false.
  enum class Serves { kAdmin, kBoth, kDecision } serves = Serves::kAdmin;
  bool open = false;  // answered without the admin token (health checks)
};

std::span<const AdminRoute> admin_routes();

// Checks the request against its listener (the admin listener: its Host, 421, then its token,
// 401, for every row but an open one), finds the row for it and runs it: 404 for an unknown
// path (or one its listener does not serve), 405 (with Allow) for a known path and another
// method, 400 for a {name} that does not decode. Never throws: a handler's exception becomes a
// 500 JSON error.
Reply dispatch(AdminService& service, AdminRequest& request);

}  // namespace sluice::server
