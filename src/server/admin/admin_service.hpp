// The admin endpoints' handlers: each turns an AdminRequest into a Reply, reading the engine's
// rules in force and changing them through the config store (sluice/control). HTTP framing lives in
// AdminSession, paths and methods in the route table (admin_router.cpp).
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin_reply.hpp"
#include "dashboard_handlers.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/loop.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::control {
class ConfigStore;
}  // namespace sluice::control

namespace sluice::server {

class AccessKeeper;
class StatsSampler;
class InstanceBeacon;
class SharedOverrideSync;
struct AdminAccess;
struct AdminRequest;

class AdminService : public std::enable_shared_from_this<AdminService> {
 public:
  // Registers its own counters with `registry`, and serves the registry's text on /metrics.
  // `config_work` runs the handlers that parse or change the config (PUT, DELETE, :validate),
  // one at a time, off the loop that serves requests.
  // `access`: who may use the admin listener, as the rules in force say.
  AdminService(std::shared_ptr<control::ConfigStore> store,
               std::shared_ptr<const AccessKeeper> access, metrics::Registry& registry,
               boost::asio::any_io_executor config_work);

  Reply healthz(const AdminRequest& request);
  Reply metrics(const AdminRequest& request);
  Reply list_rules(const AdminRequest& request);
  Reply get_rule(const AdminRequest& request);
  Reply put_rule(const AdminRequest& request);
  Reply delete_rule(const AdminRequest& request);
  Reply validate(const AdminRequest& request);
  Reply check(const AdminRequest& request);          // POST /v1/check (check_handlers.hpp)
  Reply check_rule(const AdminRequest& request);     // GET /v1/check/{rule}
  Reply release(const AdminRequest& request);        // POST /v1/release
  Reply report(const AdminRequest& request);         // POST /v1/report (key_handlers.hpp)
  Reply release_lease(const AdminRequest& request);  // DELETE /v1/leases/{token}
  Reply list_rls(const AdminRequest& request);       // GET /v1/rls/domains (rls_handlers.hpp)
  Reply get_rls(const AdminRequest& request);        // GET /v1/rls/domains/{domain}
  Reply put_rls(const AdminRequest& request);        // PUT /v1/rls/domains/{domain}
  Reply delete_rls(const AdminRequest& request);     // DELETE /v1/rls/domains/{domain}
  Reply reload(const AdminRequest& request);         // POST /v1/reload

  // GET and DELETE /v1/rules/{name}/keys/{key}: one key's state, and its reset (key_handlers).
  Reply top_keys(const AdminRequest& request);  // GET /v1/rules/{name}/top (top_handlers.hpp)
  Reply get_key(const AdminRequest& request);
  Reply reset_key(const AdminRequest& request);
  Reply list_blocks(const AdminRequest& request);  // GET /v1/rules/{name}/blocks (block_handlers)
  Reply get_block(const AdminRequest& request);
  Reply unblock(const AdminRequest& request);
  // GET, PUT, DELETE /v1/rules/{name}/overrides/{key} (override_handlers.cpp)
  Reply get_override(const AdminRequest& request);
  Reply put_override(const AdminRequest& request);
  Reply delete_override(const AdminRequest& request);

  // The dashboard (dashboard_handlers.hpp): GET /ui/..., /v1/stats/series, /v1/status,
  // /v1/changes/last.
  Reply ui(const AdminRequest& request);
  Reply series(const AdminRequest& request);
  Reply status(const AdminRequest& request);
  Reply last_change(const AdminRequest& request);
  Reply instances(const AdminRequest& request);  // GET /v1/instances (instance_beacon.hpp)
  void set_beacon(std::shared_ptr<InstanceBeacon> beacon) { beacon_ = std::move(beacon); }
  // Where the overrides of rules kept in Redis are written (shared_override_sync.hpp).
  void set_shared_overrides(std::shared_ptr<SharedOverrideSync> sync) { shared_ = std::move(sync); }
  // The live rates' sampler and the clock that dates changes; set before the first request.
  void set_dashboard(std::shared_ptr<StatsSampler> sampler, const core::Clock* wall) {
    sampler_ = std::move(sampler);
    wall_ = wall;
  }

  // Who may use the admin listener, as the rules in force say.
  std::shared_ptr<const AdminAccess> access() const;

  // Counts a reply sent, for sluice_admin_requests_total{code=...}.
  void count_reply(unsigned status);

  // The engine on the admin loop (the decision API's checks, Redis rules included) and the
  // loop's clock; set before the first request.
  void set_loop(engine::Loop* loop, const core::Clock* clock) {
    loop_ = loop;
    clock_ = clock;
  }

 private:
  void collect(metrics::Sink& sink) const;

  std::shared_ptr<control::ConfigStore> store_;
  std::shared_ptr<const AccessKeeper> access_;
  metrics::Registry& registry_;
  engine::Loop* loop_ = nullptr;
  const core::Clock* clock_ = nullptr;
  boost::asio::any_io_executor config_work_;
  std::shared_ptr<StatsSampler> sampler_;
  std::shared_ptr<InstanceBeacon> beacon_;
  std::shared_ptr<SharedOverrideSync> shared_;
  const core::Clock* wall_ = nullptr;
  LastChange last_change_;
  // A Reply whose body `work` computes on the config worker; the session waits for it.
  Reply on_config_worker(std::function<Reply(AdminService&)> work);
  Reply put(const AdminRequest& request);
  Reply erase(const AdminRequest& request);
  Reply check_body(const AdminRequest& request);  // :validate, on the worker
  Reply counted(Reply reply);  // into changes_ok_ or changes_error_ (a later one once answered)
  Reply change_override(const AdminRequest& request, bool put);  // on the worker
  // A rule kept in Redis: validated here (the worker), then written to Redis, then applied.
  Reply change_shared_override(const config::RuleSet& rules, const config::Rule& rule,
                               const AdminRequest& request,
                               const std::optional<config::LimitVariant>& given);
  void remember_change(const std::string& rule, const std::optional<config::Rule>& before,
                       const std::optional<config::Rule>& after);

  std::array<std::atomic<std::uint64_t>, 600> replies_{};  // by status code
  std::atomic<std::uint64_t> changes_ok_{0};
  std::atomic<std::uint64_t> changes_error_{0};
  metrics::Registry::Registration metrics_;  // last: unregistered before the counters go
};

}  // namespace sluice::server
