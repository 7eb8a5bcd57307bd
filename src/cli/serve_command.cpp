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
#include "sluice/engine/engine.hpp"
#include "sluice/metrics/registry.hpp"
#include "sluice/notify/service_notify.hpp"
#include "sluice/server/admin_server.hpp"
#include "sluice/server/demo_upstream.hpp"
#include "sluice/server/gateway.hpp"
#include "sluice/server/resp_server.hpp"
#include "sluice/server/rls_server.hpp"

namespace sluice::cli {

namespace asio = boost::asio;

namespace {

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

}  // namespace

int run_serve(const ServeOptions& options, std::FILE* err) {
  std::signal(SIGPIPE, SIG_IGN);

  const auto max_config_size = max_config_size_flag(options.max_config_size, "serve", err);
  if (!max_config_size) return 2;
  config::RuleSet rules;
  if (!options.config.empty() || !options.rls_config.empty()) {
    // The config, and the RLS domains of --rls-config files beside its own (reloaded with it).
    config::Loaded loaded =
        options.config.empty()
            ? config::load_rls_files(options.rls_config, *max_config_size)
            : config::load_config_file(options.config, options.rls_config, *max_config_size);
    if (!loaded.errors.empty()) {
      for (const auto& e : loaded.errors) std::fprintf(err, "%s\n", e.format().c_str());
      return 2;
    }
    rules = std::move(*loaded.rules);
  }
  // Flags override the config's listeners; the RuleSet keeps what the file says (write-back).
  std::optional<config::Endpoint> gateway_listen = rules.listen;
  config::Endpoint admin_listen = rules.admin;
  std::optional<config::Endpoint> check_listen = rules.check;
  if (!options.listen.empty()) {
    gateway_listen = endpoint_flag("--listen", options.listen, err);
    if (!gateway_listen) return 2;
  }
  if (!options.admin.empty()) {
    const auto admin = endpoint_flag("--admin", options.admin, err);
    if (!admin) return 2;
    admin_listen = *admin;
  }
  if (!options.check.empty()) {
    check_listen = endpoint_flag("--check", options.check, err);
    if (!check_listen) return 2;
    if (*check_listen == admin_listen) {
      std::fprintf(err, "sluice serve: --check: %s is also the admin address\n",
                   options.check.c_str());
      return 2;
    }
  }
  const int workers = rules.workers;

  std::unique_ptr<engine::Engine> engine;
  try {
    engine = std::make_unique<engine::Engine>(std::move(rules), clock::steady_clock().now());
  } catch (const std::invalid_argument& e) {
    std::fprintf(err, "sluice serve: %s\n", e.what());
    return 2;
  }
  // Every layer's counters, written by the admin listener's /metrics.
  metrics::Registry registry;
  const auto engine_metrics = engine->register_metrics(registry);
  const config::RuleSet& config_rules = engine->snapshot()->rules;
  const int loops =
      workers > 0 ? workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  asio::io_context io(1);
  std::unique_ptr<server::Gateway> gateway;
  try {
    if (gateway_listen) {
      gateway = std::make_unique<server::Gateway>(
          *engine, server::GatewayOptions{*gateway_listen, workers, &registry});
    }
  } catch (const std::exception& e) {
    std::fprintf(err, "sluice serve: gateway: %s\n", e.what());
    return 1;
  }
  // --- RESP listener: `--resp ADDR` or resp.listen --------------------------------------
  std::optional<config::Endpoint> resp_listen;
  if (config_rules.resp) resp_listen = config_rules.resp->listen;
  if (!options.resp.empty()) {
    resp_listen = endpoint_flag("--resp", options.resp, err);
    if (!resp_listen) return 2;
  }
  std::unique_ptr<server::RespServer> resp;
  if (resp_listen) {
    server::RespServerOptions resp_options;
    resp_options.workers = loops;
    resp_options.registry = &registry;
    resp = std::make_unique<server::RespServer>(io, *resp_listen, *engine, std::move(resp_options));
    try {
      resp->start();
    } catch (const std::exception& e) {
      std::fprintf(err, "sluice serve: resp: %s\n", e.what());
      return 1;
    }
    std::fprintf(err, "sluice serve: resp listening on %s\n",
                 config::format_endpoint(resp->local_endpoint()).c_str());
  }
  // --- end RESP listener -------------------------------------------------------------------

  // --- Envoy rate limit service: `--grpc ADDR` or grpc.listen [--rls-config FILE ...] ------
  std::optional<config::Endpoint> grpc_listen;
  if (config_rules.grpc) grpc_listen = config_rules.grpc->listen;
  if (!options.grpc.empty()) {
    grpc_listen = endpoint_flag("--grpc", options.grpc, err);
    if (!grpc_listen) return 2;
  }
  std::unique_ptr<server::RlsServer> rls;  // stops (and joins gRPC's threads) when destroyed
  if (!grpc_listen && !options.rls_config.empty()) {
    std::fprintf(err, "sluice serve: --rls-config needs --grpc ADDR (the RLS listener)\n");
    return 2;
  }
  if (grpc_listen) {
    try {
      rls = std::make_unique<server::RlsServer>(config::format_endpoint(*grpc_listen), *engine,
                                                &registry);
      rls->start();
    } catch (const std::exception& e) {
      std::fprintf(err, "sluice serve: grpc: %s\n", e.what());
      return 1;
    }
    grpc_listen->port = static_cast<std::uint16_t>(rls->port());
    std::fprintf(err, "sluice serve: grpc (Envoy RLS) listening on %s\n",
                 config::format_endpoint(*grpc_listen).c_str());
  }
  // --- end Envoy rate limit service --------------------------------------------------------

  server::AdminServer admin(
      io, *engine,
      server::AdminOptions{admin_listen, options.config, options.rls_config, *max_config_size,
                           check_listen, options.admin_insecure},
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
  if (gateway) {
    gateway->start();
    std::fprintf(err, "sluice serve: gateway listening on %s\n",
                 config::format_endpoint(gateway->local_endpoint()).c_str());
  }
  std::fprintf(err, "sluice serve: admin listening on %s\n",
               config::format_endpoint(admin.local_endpoint()).c_str());
  if (auto check = admin.check_endpoint()) {
    std::fprintf(err, "sluice serve: check listening on %s\n",
                 config::format_endpoint(*check).c_str());
  }
  std::fflush(err);
  notify::ready();

  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer drain_timer(io);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    std::fprintf(err, "sluice serve: shutting down\n");
    std::fflush(err);
    notify::stopping();
    if (gateway) gateway->shutdown();
    drain(drain_timer, gateway.get(), std::chrono::steady_clock::now() + kDrainTime, [&] {
      if (gateway) gateway->stop();
      if (resp) resp->stop();
      admin.stop();
      io.stop();
    });
  });
  io.run();
  if (gateway) gateway->stop();
  if (resp) resp->stop();
  admin.stop();
  return 0;
}

int run_demo_upstream(const std::string& listen, std::FILE* err) {
  auto ep = config::parse_endpoint(listen);
  if (!ep) {
    std::fprintf(err, "sluice demo-upstream: --listen: %s\n", ep.error().c_str());
    return 2;
  }
  return server::run_demo_upstream(*ep, err);
}

}  // namespace sluice::cli
