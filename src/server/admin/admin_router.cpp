// The route table and dispatch (admin_router.hpp).
#include "admin_router.hpp"

#include <array>
#include <exception>
#include <optional>

#include "admin_service.hpp"
#include "sluice/proto/http/request_target.hpp"

namespace sluice::server {
namespace {

using boost::beast::http::verb;

using Serves = AdminRoute::Serves;

constexpr std::array kRoutes = {
    AdminRoute{verb::get, "/healthz", &AdminService::healthz, Serves::kBoth, true},
    AdminRoute{verb::get, "/metrics", &AdminService::metrics},
    AdminRoute{verb::get, "/v1/rules", &AdminService::list_rules},
    AdminRoute{verb::post, "/v1/rules:validate", &AdminService::validate},
    AdminRoute{verb::get, "/v1/rules/{name}", &AdminService::get_rule},
    AdminRoute{verb::put, "/v1/rules/{name}", &AdminService::put_rule},
    AdminRoute{verb::delete_, "/v1/rules/{name}", &AdminService::delete_rule},
    AdminRoute{verb::post, "/v1/check", &AdminService::check, Serves::kDecision},
    AdminRoute{verb::get, "/v1/check/{name}", &AdminService::check_rule, Serves::kDecision},
    AdminRoute{verb::post, "/v1/release", &AdminService::release, Serves::kDecision},
    AdminRoute{verb::delete_, "/v1/leases/{name}", &AdminService::release_lease, Serves::kDecision},
    AdminRoute{verb::get, "/v1/rls/domains", &AdminService::list_rls},
    AdminRoute{verb::get, "/v1/rls/domains/{name}", &AdminService::get_rls},
    AdminRoute{verb::put, "/v1/rls/domains/{name}", &AdminService::put_rls},
    AdminRoute{verb::delete_, "/v1/rls/domains/{name}", &AdminService::delete_rls},
    AdminRoute{verb::post, "/v1/reload", &AdminService::reload},
};

constexpr std::string_view kNameParam = "{name}";

// Whether `path` matches `pattern`; the raw {name} segment goes to `segment`.
bool matches(std::string_view pattern, std::string_view path, std::string_view& segment) {
  if (!pattern.ends_with(kNameParam)) return pattern == path;
  const auto prefix = pattern.substr(0, pattern.size() - kNameParam.size());
  if (!path.starts_with(prefix)) return false;
  segment = path.substr(prefix.size());
  return !segment.empty() && segment.find('/') == std::string_view::npos;
}

Reply run(AdminService& service, const AdminRoute& route, std::string_view segment,
          AdminRequest& request) {
  if (!segment.empty()) {
    auto name = proto::http::percent_decode(segment);
    if (!name) return error_reply(400, "bad percent-encoding in the rule name", "name");
    request.name = std::move(*name);
  }
  try {
    return (service.*route.handler)(request);
  } catch (const std::exception& e) {
    return error_reply(500, std::string("internal error: ") + e.what());
  } catch (...) {
    return error_reply(500, "internal error");
  }
}

bool serves(const AdminRoute& route, const ListenerInfo& listener, const AdminAccess& access) {
  if (listener.kind == ListenerInfo::Kind::kCheck) return route.serves != Serves::kAdmin;
  return route.serves != Serves::kDecision || access.check_on_admin;
}

// The admin listener's checks, before anything else is said about the request.
std::optional<Reply> refused(const AdminRequest& request, const AdminAccess& access) {
  if (request.listener->kind != ListenerInfo::Kind::kAdmin) return std::nullopt;
  if (!request.host) {
    // Browsers always send Host; only HTTP/1.0 may leave it out (RFC 9112 3.2).
    if (request.version < 11) return std::nullopt;
    return error_reply(400, "an HTTP/1.1 request needs a Host field", "Host");
  }
  if (request.repeated_host) return error_reply(400, "a request has one Host field", "Host");
  if (host_allowed(*request.host, *request.listener, access.hosts)) return std::nullopt;
  // 421 Misdirected Request: this listener does not answer for that name (RFC 9110 15.5.20).
  return error_reply(421,
                     "Host " + std::string(*request.host) +
                         " is not a name of this admin listener: use its address, or add the "
                         "name to admin_hosts",
                     "Host");
}

Reply unauthorized(const AdminRequest& request) {
  const bool sent = !request.authorization.empty();
  Reply reply = error_reply(401, sent ? "the admin token does not match"
                                      : "this endpoint needs the admin token: send "
                                        "Authorization: Bearer TOKEN");
  reply.headers.emplace_back("WWW-Authenticate", std::string("Bearer realm=\"sluice admin\"") +
                                                     (sent ? ", error=\"invalid_token\"" : ""));
  return reply;
}

}  // namespace

std::span<const AdminRoute> admin_routes() { return kRoutes; }

Reply dispatch(AdminService& service, AdminRequest& request) {
  const auto access = service.access();
  if (auto refusal = refused(request, *access)) return *refusal;
  const bool needs_token =
      request.listener->kind == ListenerInfo::Kind::kAdmin && access->has_token;
  const AdminRoute* row = nullptr;
  std::string_view row_segment;
  std::string allow;
  for (const AdminRoute& route : kRoutes) {
    std::string_view segment;
    if (!serves(route, *request.listener, *access)) continue;
    if (!matches(route.pattern, request.path, segment)) continue;
    if (route.method != request.method) {
      if (!allow.empty()) allow += ", ";
      allow += std::string(boost::beast::http::to_string(route.method));
      continue;
    }
    row = &route;
    row_segment = segment;
    break;
  }
  // Without the token a client learns nothing, not even which paths exist.
  if (needs_token && !(row != nullptr && row->open) &&
      !bearer_matches(request.authorization, *access)) {
    return unauthorized(request);
  }
  if (row != nullptr) return run(service, *row, row_segment, request);
  if (allow.empty()) return error_reply(404, "no such endpoint: " + std::string(request.path));
  Reply reply = error_reply(405, "method not allowed; allowed: " + allow);
  reply.headers.emplace_back("Allow", allow);
  return reply;
}

}  // namespace sluice::server
