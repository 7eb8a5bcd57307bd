// `sluice serve` and `sluice demo-upstream` (serve_command.hpp): the composition root of the
// daemon. Wires the config, the engine, the gateway and the admin server; holds no logic of
// theirs.
#include "serve_command.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "config_size_flag.hpp"
#include "sluice/clock/clocks.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/control/control.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/log/log.hpp"
#include "sluice/metrics/registry.hpp"
#include "sluice/notify/service_notify.hpp"
#include "sluice/server/admin_server.hpp"
#include "sluice/server/gateway.hpp"
#include "sluice/server/resp_server.hpp"
#include "sluice/server/rls_server.hpp"

namespace sluice::cli {

namespace asio = boost::asio;

namespace {

// The clocks serve hands every listener: the only place below main that picks them.
const core::Clocks kClocks{&clock::steady_clock(), &clock::system_clock()};

// How long a graceful shutdown waits for requests in flight before dropping them.
constexpr auto kDrainTime = std::chrono::seconds(10);
constexpr auto kDrainPoll = std::chrono::milliseconds(20);

std::optional<config::Endpoint> endpoint_flag(const char* flag, const std::string& text,
                                              std::FILE* err) {
  auto ep = config::parse_endpoint(text);
  if (!ep) {
    std::fprintf(err, "sluice serve: %s: %s\n", flag, ep.error().c_str());
    return std::nullopt;
  }
  return *ep;
}

// Polls until the gateway has drained or the deadline passed, then stops everything.
void drain(asio::steady_timer& timer, server::Gateway* gateway,
           std::chrono::steady_clock::time_point deadline, const std::function<void()>& done) {
  if (gateway == nullptr || gateway->open_connections() == 0 ||
      std::chrono::steady_clock::now() >= deadline) {
    done();
    return;
  }
  timer.expires_after(kDrainPoll);
  timer.async_wait([&timer, gateway, deadline, done](const boost::system::error_code& ec) {
    if (!ec) drain(timer, gateway, deadline, done);
  });
}

// The listeners serve starts: the config's, each overridden by its flag.
struct Listeners {
  std::optional<config::Endpoint> gateway;
  std::optional<config::Endpoint> admin;
  std::optional<config::Endpoint> check;
  std::optional<config::Endpoint> resp;
  std::optional<config::Endpoint> grpc;
};

// `flag` (when given) replaces `target`; false (the error written) when it does not parse.
bool override_endpoint(const char* flag, const std::string& text,
                       std::optional<config::Endpoint>& target, std::FILE* err) {
  if (text.empty()) return true;
  target = endpoint_flag(flag, text, err);
  return target.has_value();
}

// The config and the RLS domains of --rls-config files beside its own (reloaded with it);
// an empty RuleSet without either. nullopt when they do not load (the errors written).
std::optional<config::RuleSet> load_rules(const ServeOptions& options, std::size_t max_size,
                                          std::FILE* err) {
  if (options.config.empty() && options.rls_config.empty()) return config::RuleSet{};
  config::Loaded loaded =
      options.config.empty()
          ? config::load_rls_files(options.rls_config, max_size)
          : config::load_config_file(options.config, options.rls_config, max_size);
  if (!loaded.errors.empty()) {
    for (const auto& e : loaded.errors) std::fprintf(err, "%s\n", e.format().c_str());
    return std::nullopt;
  }
  return std::move(*loaded.rules);
}

// Flags override the config's listeners; the RuleSet keeps what the file says (write-back).
std::optional<Listeners> resolve_listeners(const ServeOptions& o, const config::RuleSet& rules,
                                           std::FILE* err) {
  Listeners l{rules.listen, rules.admin, rules.check, std::nullopt, std::nullopt};
  if (rules.resp) l.resp = rules.resp->listen;
  if (rules.grpc) l.grpc = rules.grpc->listen;
  if (o.admin == "off") {
    l.admin.reset();
  } else if (!override_endpoint("--admin", o.admin, l.admin, err)) {
    return std::nullopt;
  }
  if (!override_endpoint("--listen", o.listen, l.gateway, err) ||
      !override_endpoint("--check", o.check, l.check, err) ||
      !override_endpoint("--resp", o.resp, l.resp, err) ||
      !override_endpoint("--grpc", o.grpc, l.grpc, err)) {
    return std::nullopt;
  }
  if (!o.check.empty() && l.check == l.admin) {
    std::fprintf(err, "sluice serve: --check: %s is also the admin address\n", o.check.c_str());
    return std::nullopt;
  }
  if (!l.grpc && !o.rls_config.empty()) {
    std::fprintf(err, "sluice serve: --rls-config needs --grpc ADDR (the RLS listener)\n");
    return std::nullopt;
  }
  return l;
}

// The frontends besides the admin listener; each absent when its listener is not configured.
struct Frontends {
  std::unique_ptr<server::Gateway> gateway;
  std::unique_ptr<server::RespServer> resp;
  std::unique_ptr<server::RlsServer> rls;  // stops (and joins gRPC's threads) when destroyed

  void stop() {
    if (gateway) gateway->stop();
    if (resp) resp->stop();
  }
};

// A readiness line tests and scripts wait for: its text is the message, in either format.
void log_listening(const std::string& listener, const std::string& address) {
  log::info("sluice serve: " + listener + " listening on " + address,
            {{"listener", listener}, {"address", address}});
}

// Binds the gateway, RESP and RLS listeners that are configured; false (the error written)
// when one cannot be bound. The gateway accepts only after start_serving.
bool bind_frontends(const Listeners& l, int workers, asio::io_context& io, engine::Engine& engine,
                    metrics::Registry& registry, Frontends& out, std::FILE* err) {
  const char* what = "gateway";
  try {
    if (l.gateway) {
      out.gateway = std::make_unique<server::Gateway>(
          engine, server::GatewayOptions{*l.gateway, workers, &registry, kClocks});
    }
    if (l.resp) {
      what = "resp";
      server::RespServerOptions resp_options;
      resp_options.workers =
          workers > 0 ? workers
                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      resp_options.registry = &registry;
      resp_options.clocks = kClocks;
      out.resp = std::make_unique<server::RespServer>(io, *l.resp, engine, std::move(resp_options));
      out.resp->start();
    }
    if (l.grpc) {
      what = "grpc";
      out.rls = std::make_unique<server::RlsServer>(config::format_endpoint(*l.grpc), engine,
                                                    &registry, kClocks);
      out.rls->start();
    }
  } catch (const std::exception& e) {
    std::fprintf(err, "sluice serve: %s: %s\n", what, e.what());
    return false;
  }
  return true;
}

// Starts the gateway after the admin listener, says where each listens, and tells systemd.
// Called once the config thread handles SIGHUP: a listener said to be up may be sent one at
// once, and before the handler is in place SIGHUP's default action ends the process.
void start_serving(Frontends& f, const Listeners& l, const server::AdminServer& admin,
                   std::FILE* err) {
  if (f.resp) log_listening("resp", config::format_endpoint(f.resp->local_endpoint()));
  if (f.rls) {
    config::Endpoint bound = *l.grpc;
    bound.port = static_cast<std::uint16_t>(f.rls->port());
    log_listening("grpc (Envoy RLS)", config::format_endpoint(bound));
  }
  // The admin and check lines next: once the gateway answers, every readiness line is out.
  if (auto where = admin.local_endpoint()) log_listening("admin", config::format_endpoint(*where));
  if (auto check = admin.check_endpoint()) log_listening("check", config::format_endpoint(*check));
  if (f.gateway) {
    f.gateway->start();
    log_listening("gateway", config::format_endpoint(f.gateway->local_endpoint()));
  }
  std::fflush(err);
  notify::ready();
}

// A dry-run rule's would-be refusals: one line a second per rule at most, with their count
// (the engine counts them in an atomic per rule; no request waits on the log).
void log_dry_run_denials(engine::Engine& engine) {
  engine.take_dry_run_denials([](const engine::Engine::DryRunDenials& d) {
    constexpr std::string_view kLine = "sluice: dry-run rule would have refused requests";
    const auto count = static_cast<std::int64_t>(d.count);
    if (d.route.empty()) {  // the check API's: no route
      log::warn(
          kLine,
          {{"rule", std::string(d.rule)}, {"count", count}, {"key", d.key}, {"in_last", "1s"}});
    } else {
      log::warn(kLine, {{"rule", std::string(d.rule)},
                        {"route", d.route},
                        {"count", count},
                        {"key", d.key},
                        {"in_last", "1s"}});
    }
  });
}

// The decision service's concurrency permits that were never given back (by the check API or
// SLUICE.CHECK), returned when their time is up: looked at once a second.
void expire_leases(asio::steady_timer& timer, engine::Engine& engine, const core::Clock& clock) {
  timer.expires_after(std::chrono::seconds(1));
  timer.async_wait([&timer, &engine, &clock](const boost::system::error_code& ec) {
    if (ec) return;
    engine.expire_leases(clock.now());
    log_dry_run_denials(engine);
    expire_leases(timer, engine, clock);
  });
}

// Runs the loop until SIGINT/SIGTERM, then drains the gateway (kDrainTime at most).
void run_until_signal(asio::io_context& io, Frontends& f, server::AdminServer& admin,
                      control::Control& control, std::FILE* err) {
  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer drain_timer(io);
  asio::steady_timer lease_timer(io);
  expire_leases(lease_timer, control.store().engine(), clock::steady_clock());
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    log::info("sluice serve: shutting down");
    std::fflush(err);
    notify::stopping();
    if (f.gateway) f.gateway->shutdown();
    drain(drain_timer, f.gateway.get(), std::chrono::steady_clock::now() + kDrainTime, [&] {
      f.stop();
      admin.stop();
      control.stop();
      lease_timer.cancel();
      io.stop();
    });
  });
  io.run();
}

}  // namespace

int run_serve(const ServeOptions& options, std::FILE* err) {
  std::signal(SIGPIPE, SIG_IGN);
  const auto level = log::parse_level(options.log_level);
  const auto format = log::parse_format(options.log_format);
  if (!level || !format) {
    std::fprintf(err,
                 "sluice serve: --log-level must be trace, debug, info, warn or error and "
                 "--log-format text or json\n");
    return 2;
  }
  log::configure(*level, *format);

  const auto max_config_size = max_config_size_flag(options.max_config_size, "serve", err);
  if (!max_config_size) return 2;
  auto rules = load_rules(options, *max_config_size, err);
  if (!rules) return 2;
  const auto listeners = resolve_listeners(options, *rules, err);
  if (!listeners) return 2;
  const int workers = rules->workers;
  const auto rule_count = static_cast<std::int64_t>(rules->rules.size());
  const auto route_count = static_cast<std::int64_t>(rules->routes.size());
  const bool redis = rules->redis && rules->redis->configured();

  std::unique_ptr<engine::Engine> engine;
  try {
    engine = std::make_unique<engine::Engine>(std::move(*rules), clock::steady_clock().now(),
                                              &clock::system_clock());
  } catch (const std::invalid_argument& e) {
    std::fprintf(err, "sluice serve: %s\n", e.what());
    return 2;
  }
  // Every layer's counters, written by the admin listener's /metrics.
  metrics::Registry registry;
  const auto engine_metrics = engine->register_metrics(registry);

  asio::io_context io(1);
  Frontends frontends;
  if (!bind_frontends(*listeners, workers, io, *engine, registry, frontends, err)) return 1;

  // The config lifecycle (reloads on SIGHUP and file changes, the admin API's changes), with
  // or without an admin listener.
  control::Control control(
      *engine, control::ControlOptions{options.config, options.rls_config, *max_config_size},
      clock::steady_clock());
  server::AdminServer admin(
      io, *engine, control,
      server::AdminOptions{listeners->admin, listeners->check, options.admin_insecure, kClocks},
      registry);
  try {
    admin.start();
  } catch (const server::AdminRefused& e) {
    std::fprintf(err, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(err, "sluice serve: admin: %s\n", e.what());
    return 1;
  }
  control.start();
  start_serving(frontends, *listeners, admin, err);
  log::info("sluice serve: started",
            {{"config", options.config.empty() ? "none" : options.config},
             {"rules", rule_count},
             {"routes", route_count},
             {"storage", redis ? "redis" : "local"},
             {"generation", static_cast<std::int64_t>(engine->version())}});
  run_until_signal(io, frontends, admin, control, err);
  frontends.stop();
  admin.stop();
  control.stop();
  return 0;
}

}  // namespace sluice::cli
