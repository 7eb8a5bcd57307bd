// The admin listener: health, Prometheus metrics and the live rules API of DESIGN.md
// ("Admin and decision HTTP API"), plus config reload on SIGHUP and on file change.
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
//
// Rules changed through the API are validated in full, applied with Engine::apply, and written
// back to the config file atomically (temp file + fsync + rename) unless the config says
// `write_back: false` or there is no file. With a config file, SIGHUP and any change of the
// file (checked every second) reload it; a file with errors is refused, its errors go to
// stderr as `file:line: problem`, and the rules in force keep serving. Reloads and changes are
// parsed and checked on a config thread of their own and swapped in when complete.
//
// With a `check` listener, the decision API is served there too, without the rule-changing
// routes; the admin listener checks every request's Host and, when the config names one, its
// bearer token (docs/admin-api.md, "Access").
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

#include "sluice/config/loader.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::server {

struct AdminOptions {
  config::Endpoint listen;
  std::string config_path;  // "": no file, so no reload and no write-back
  // envoyproxy/ratelimit files (serve --rls-config), reloaded with the config.
  std::vector<std::string> rls_files;
  // The largest config file a reload (or a write-back's re-read) reads (`--max-config-size`).
  std::size_t max_config_size = config::kDefaultMaxConfigSize;
  // The decision API (/v1/check..., /healthz) alone, on an address of its own: no rule
  // changes, no token, no Host check. The config's `check`, or `serve --check`.
  std::optional<config::Endpoint> check;
  // `serve --admin-insecure`: the admin listener may be off loopback without a token.
  bool insecure = false;
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
  // `engine` and `registry` must outlive the server; /metrics is the registry's text. Handlers
  // run on `io`, which one thread runs (the decision API's engine loop lives there). Reloads,
  // rule changes and :validate run on a thread of the server's own, so a config that takes
  // seconds to parse never stalls `io`.
  AdminServer(boost::asio::io_context& io, engine::Engine& engine, AdminOptions options,
              metrics::Registry& registry);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Reads the admin token, binds the listeners and starts accepting; with a config file, also
  // starts SIGHUP handling and the file watch. Throws AdminRefused (nothing bound) for a token
  // it cannot read or an exposed listener without one, std::runtime_error naming the address
  // when it cannot bind.
  void start();

  // Stops accepting, stops the watch and SIGHUP handling and closes open admin connections
  // (a request being answered is finished first). Idempotent; thread-safe.
  void stop();

  // The address actually bound (the chosen port when `listen.port` was 0). After start().
  config::Endpoint local_endpoint() const;
  // The check listener's, when there is one.
  std::optional<config::Endpoint> check_endpoint() const;

  // Reloads the config file now, as SIGHUP does. Returns its errors (`file:line: problem`),
  // empty when the new rules are in force. Thread-safe.
  std::vector<std::string> reload();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with in-flight handlers, which may outlive stop()
};

}  // namespace sluice::server
