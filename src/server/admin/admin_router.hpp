// The admin API's route table: one row per (method, path pattern) -> handler, like nginx's
// ngx_command_t, so a new endpoint (POST /v1/check, GET /v1/check/{rule}) is one more row.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <span>
#include <string>
#include <string_view>

#include "admin_reply.hpp"

namespace sluice::server {

class AdminService;

struct AdminRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string_view path;   // the target before '?'
  std::string_view query;  // after '?', may be empty
  std::string_view body;
  std::string name;  // the {name} segment of the matched pattern, percent-decoded
};

struct AdminRoute {
  boost::beast::http::verb method;
  // A literal path, or one ending in "{name}", which matches one non-empty path segment.
  std::string_view pattern;
  Reply (AdminService::*handler)(const AdminRequest&);
};

std::span<const AdminRoute> admin_routes();

// Finds the row for the request and runs it: 404 for an unknown path, 405 (with Allow) for a
// known path and another method, 400 for a {name} that does not decode. Never throws: a
// handler's exception becomes a 500 JSON error.
Reply dispatch(AdminService& service, AdminRequest& request);

}  // namespace sluice::server
