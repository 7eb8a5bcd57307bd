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

constexpr std::array kRoutes = {
    AdminRoute{verb::get, "/healthz", &AdminService::healthz},
    AdminRoute{verb::get, "/metrics", &AdminService::metrics},
    AdminRoute{verb::get, "/v1/rules", &AdminService::list_rules},
    AdminRoute{verb::post, "/v1/rules:validate", &AdminService::validate},
    AdminRoute{verb::get, "/v1/rules/{name}", &AdminService::get_rule},
    AdminRoute{verb::put, "/v1/rules/{name}", &AdminService::put_rule},
    AdminRoute{verb::delete_, "/v1/rules/{name}", &AdminService::delete_rule},
    AdminRoute{verb::post, "/v1/check", &AdminService::check},
    AdminRoute{verb::get, "/v1/check/{name}", &AdminService::check_rule},
    AdminRoute{verb::post, "/v1/release", &AdminService::release},
    AdminRoute{verb::delete_, "/v1/leases/{name}", &AdminService::release_lease},
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

}  // namespace

std::span<const AdminRoute> admin_routes() { return kRoutes; }

Reply dispatch(AdminService& service, AdminRequest& request) {
  std::string allow;
  for (const AdminRoute& route : kRoutes) {
    std::string_view segment;
    if (!matches(route.pattern, request.path, segment)) continue;
    if (route.method != request.method) {
      if (!allow.empty()) allow += ", ";
      allow += std::string(boost::beast::http::to_string(route.method));
      continue;
    }
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
  if (allow.empty()) return error_reply(404, "no such endpoint: " + std::string(request.path));
  Reply reply = error_reply(405, "method not allowed; allowed: " + allow);
  reply.headers.emplace_back("Allow", allow);
  return reply;
}

}  // namespace sluice::server
