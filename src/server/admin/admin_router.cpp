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
    AdminRoute{verb::get, "/v1/rules/{name}/top", &AdminService::top_keys},
    AdminRoute{verb::get, "/v1/rules/{name}/keys/{key}", &AdminService::get_key},
    AdminRoute{verb::delete_, "/v1/rules/{name}/keys/{key}", &AdminService::reset_key},
    AdminRoute{verb::get, "/v1/rules/{name}/blocks", &AdminService::list_blocks},
    AdminRoute{verb::get, "/v1/rules/{name}/blocks/{key}", &AdminService::get_block},
    AdminRoute{verb::delete_, "/v1/rules/{name}/blocks/{key}", &AdminService::unblock},
    AdminRoute{verb::get, "/v1/rules/{name}/overrides/{key}", &AdminService::get_override},
    AdminRoute{verb::put, "/v1/rules/{name}/overrides/{key}", &AdminService::put_override},
    AdminRoute{verb::delete_, "/v1/rules/{name}/overrides/{key}", &AdminService::delete_override},
    AdminRoute{verb::post, "/v1/check", &AdminService::check, Serves::kDecision},
    AdminRoute{verb::get, "/v1/check/{name}", &AdminService::check_rule, Serves::kDecision},
    AdminRoute{verb::post, "/v1/release", &AdminService::release, Serves::kDecision},
    AdminRoute{verb::post, "/v1/report", &AdminService::report, Serves::kDecision},
    AdminRoute{verb::delete_, "/v1/leases/{name}", &AdminService::release_lease, Serves::kDecision},
    AdminRoute{verb::get, "/v1/rls/domains", &AdminService::list_rls},
    AdminRoute{verb::get, "/v1/rls/domains/{name}", &AdminService::get_rls},
    AdminRoute{verb::put, "/v1/rls/domains/{name}", &AdminService::put_rls},
    AdminRoute{verb::delete_, "/v1/rls/domains/{name}", &AdminService::delete_rls},
    AdminRoute{verb::get, "/v1/instances", &AdminService::instances},
    AdminRoute{verb::post, "/v1/reload", &AdminService::reload},
    // The dashboard: its files are open (the page asks for the token), its data is not.
    AdminRoute{verb::get, "/ui", &AdminService::ui, Serves::kAdmin, true},
    AdminRoute{verb::get, "/ui/", &AdminService::ui, Serves::kAdmin, true},
    AdminRoute{verb::get, "/ui/{key}", &AdminService::ui, Serves::kAdmin, true},
    AdminRoute{verb::get, "/v1/stats/series", &AdminService::series},
    AdminRoute{verb::get, "/v1/status", &AdminService::status},
    AdminRoute{verb::get, "/v1/changes/last", &AdminService::last_change},
};

// The raw segments a pattern's {name} and {key} matched.
struct Captured {
  std::string_view name;
  std::string_view key;
};

// Whether `path` matches `pattern` segment by segment: a literal segment as it is, {name} and
// {key} any one non-empty segment (kept raw, percent-encoded, in `captured`).
bool matches(std::string_view pattern, std::string_view path, Captured& captured) {
  if (pattern.find('{') == std::string_view::npos) return pattern == path;
  while (!pattern.empty()) {
    const std::size_t p_end = std::min(pattern.find('/', 1), pattern.size());
    const std::size_t s_end = std::min(path.find('/', 1), path.size());
    const std::string_view want = pattern.substr(0, p_end);
    const std::string_view got = path.substr(0, s_end);
    if (want == "/{name}" || want == "/{key}") {
      if (got.size() < 2 || got[0] != '/') return false;
      (want == "/{name}" ? captured.name : captured.key) = got.substr(1);
    } else if (want != got) {
      return false;
    }
    pattern.remove_prefix(p_end);
    path.remove_prefix(s_end);
  }
  return path.empty();
}

Reply run(AdminService& service, const AdminRoute& route, const Captured& captured,
          AdminRequest& request) {
  if (!captured.name.empty()) {
    auto name = proto::http::percent_decode(captured.name);
    if (!name) return error_reply(400, "bad percent-encoding in the rule name", "name");
    request.name = std::move(*name);
  }
  if (!captured.key.empty()) {
    auto key = proto::http::percent_decode(captured.key);
    if (!key) return error_reply(400, "bad percent-encoding in the key", "key");
    request.key = std::move(*key);
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
  Captured row_captured;
  std::string allow;
  for (const AdminRoute& route : kRoutes) {
    Captured captured;
    if (!serves(route, *request.listener, *access)) continue;
    if (!matches(route.pattern, request.path, captured)) continue;
    if (route.method != request.method) {
      if (!allow.empty()) allow += ", ";
      allow += std::string(boost::beast::http::to_string(route.method));
      continue;
    }
    row = &route;
    row_captured = captured;
    break;
  }
  // Without the token a client learns nothing, not even which paths exist.
  if (needs_token && !(row != nullptr && row->open) &&
      !bearer_matches(request.authorization, *access)) {
    return unauthorized(request);
  }
  if (row != nullptr) return run(service, *row, row_captured, request);
  if (allow.empty()) return error_reply(404, "no such endpoint: " + std::string(request.path));
  Reply reply = error_reply(405, "method not allowed; allowed: " + allow);
  reply.headers.emplace_back("Allow", allow);
  return reply;
}

}  // namespace sluice::server
