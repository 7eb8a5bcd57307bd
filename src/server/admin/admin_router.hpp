// The admin API's route table: one row per (method, path pattern) -> handler, like nginx's
// ngx_command_t, so a new endpoint (POST /v1/check, GET /v1/check/{rule}) is one more row.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <span>
#include <string_view>

#include "admin_reply.hpp"
#include "admin_request.hpp"

namespace sluice::server {

class AdminService;

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
