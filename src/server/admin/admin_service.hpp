// The admin endpoints' handlers: each turns an AdminRequest into a Reply, reading the engine's
// snapshot and changing rules through the ConfigStore. HTTP framing lives in AdminSession,
// paths and methods in the route table (admin_router.cpp).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "admin_reply.hpp"

namespace sluice::backend::redis {
class Store;
}

namespace sluice::server {

class ConfigStore;
struct AdminRequest;

class AdminService {
 public:
  using MetricsWriter = std::function<void(std::string&)>;

  AdminService(std::shared_ptr<ConfigStore> store, std::vector<MetricsWriter> metrics_writers);

  Reply healthz(const AdminRequest& request);
  Reply metrics(const AdminRequest& request);
  Reply list_rules(const AdminRequest& request);
  Reply get_rule(const AdminRequest& request);
  Reply put_rule(const AdminRequest& request);
  Reply delete_rule(const AdminRequest& request);
  Reply validate(const AdminRequest& request);
  Reply check(const AdminRequest& request);       // POST /v1/check (check_handlers.hpp)
  Reply check_rule(const AdminRequest& request);  // GET /v1/check/{rule}

  // Counts a reply sent, for sluice_admin_requests_total{code=...}.
  void count_reply(unsigned status);

  // The admin loop's Redis store, for checks of rules kept in Redis (null: none configured).
  void set_redis(backend::redis::Store* redis) { redis_ = redis; }

 private:
  std::shared_ptr<ConfigStore> store_;
  std::vector<MetricsWriter> metrics_writers_;
  backend::redis::Store* redis_ = nullptr;
  Reply put(const AdminRequest& request);
  Reply erase(const AdminRequest& request);
  Reply counted(Reply reply);  // into changes_ok_ or changes_error_

  std::array<std::atomic<std::uint64_t>, 600> replies_{};  // by status code
  std::atomic<std::uint64_t> changes_ok_{0};
  std::atomic<std::uint64_t> changes_error_{0};
};

}  // namespace sluice::server
