// The admin listener: health, Prometheus metrics and the live rules API of DESIGN.md
// ("Admin and decision HTTP API"): the HTTP face of the config lifecycle (sluice/control).
//
// Endpoints (docs/admin-api.md has the request and reply formats):
//   GET /healthz                  200 "ok"
//   GET /metrics                  Prometheus text 0.0.4: the registry's (every layer's counters)
//   GET /v1/rules                 every rule, as a JSON array
//   GET|PUT|DELETE /v1/rules/{name}
//   POST /v1/rules:validate       a rule or a whole config, checked without applying
//   POST /v1/check                the decision API: one check or a batch, as JSON
//   GET /v1/check/{rule}?key=K    204 allowed / 429 denied, for nginx auth_request
//   POST /v1/release, DELETE /v1/leases/{token}   a concurrency permit a check handed out
//   POST /v1/reload               the files read again, as SIGHUP does
//
// Rules changed through the API go through control::ConfigStore: validated in full, applied,
// and written back to the config file atomically unless the config says `write_back: false`
// or there is no file. Changes and :validate run on the config thread (Control::executor()).
//
// With a `check` listener, the decision API is served there too, without the rule-changing
// routes; the admin listener checks every request's Host and, when the config names one, its
// bearer token (docs/admin-api.md, "Access"). With `admin: off` only the check listener runs.
//
// Listeners (gateway, admin, ...) are bound at start-up: a reload changes rules, routes and
// upstreams, not the addresses sluice listens on.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::control {
class Control;
}  // namespace sluice::control

namespace sluice::server {

struct AdminOptions {
  std::optional<config::Endpoint> listen;  // none: `admin: off`
  // The decision API (/v1/check..., /healthz) alone, on an address of its own: no rule
  // changes, no token, no Host check. The config's `check`, or `serve --check`.
  std::optional<config::Endpoint> check;
  // `serve --admin-insecure`: the admin listener may be off loopback without a token.
  bool insecure = false;
  core::Clocks clocks;  // the steady one is required: the decision API's loop
};

// The config forbids serving it as asked: the admin token cannot be read, or the admin
// listener would be reachable off loopback with no token. The message is `file:line: problem`
// lines; `sluice serve` exits 2 with it.
class AdminRefused : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class AdminServer {
 public:
  // `engine`, `control` and `registry` must outlive the server; /metrics is the registry's
  // text. Handlers run on `io`, which one thread runs (the decision API's engine loop lives
  // there); rule changes and :validate on the config thread, so a config that takes seconds to
  // parse never stalls `io`.
  AdminServer(boost::asio::io_context& io, engine::Engine& engine, control::Control& control,
              AdminOptions options, metrics::Registry& registry);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Reads the admin token (and guards every later rule set's), binds the listeners and starts
  // accepting. Throws AdminRefused (nothing bound) for a token it cannot read or an exposed
  // listener without one, std::runtime_error naming the address when it cannot bind.
  void start();

  // Stops accepting and closes open admin connections (a request being answered is finished
  // first). Idempotent; thread-safe.
  void stop();

  // The address actually bound (the chosen port when `listen.port` was 0), when there is an
  // admin listener. After start().
  std::optional<config::Endpoint> local_endpoint() const;
  // The check listener's, when there is one.
  std::optional<config::Endpoint> check_endpoint() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with in-flight handlers, which may outlive stop()
};

}  // namespace sluice::server
