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

#include "sluice/backend/redis/store.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/engine.hpp"
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

  config::RuleSet rules;
  if (!options.config.empty()) {
    config::Loaded loaded = config::load_config_file(options.config);
    if (!loaded.errors.empty()) {
      for (const auto& e : loaded.errors) std::fprintf(err, "%s\n", e.format().c_str());
      return 2;
    }
    rules = std::move(*loaded.rules);
  }
  // Flags override the config's listeners; the RuleSet keeps what the file says (write-back).
  std::optional<config::Endpoint> gateway_listen = rules.listen;
  config::Endpoint admin_listen = rules.admin;
  if (!options.listen.empty()) {
    gateway_listen = endpoint_flag("--listen", options.listen, err);
    if (!gateway_listen) return 2;
  }
  if (!options.admin.empty()) {
    const auto admin = endpoint_flag("--admin", options.admin, err);
    if (!admin) return 2;
    admin_listen = *admin;
  }
  const int workers = rules.workers;

  std::unique_ptr<engine::Engine> engine;
  try {
    engine = std::make_unique<engine::Engine>(std::move(rules), core::SteadyClock::read());
  } catch (const std::invalid_argument& e) {
    std::fprintf(err, "sluice serve: %s\n", e.what());
    return 2;
  }

  asio::io_context io(1);
  std::unique_ptr<server::Gateway> gateway;
  std::vector<server::AdminServer::MetricsWriter> metrics;
  try {
    if (gateway_listen) {
      gateway = std::make_unique<server::Gateway>(*engine,
                                                  server::GatewayOptions{*gateway_listen, workers});
      metrics.emplace_back([g = gateway.get()](std::string& out) { g->write_metrics(out); });
    }
  } catch (const std::exception& e) {
    std::fprintf(err, "sluice serve: gateway: %s\n", e.what());
    return 1;
  }
  // --- RESP listener (issue 5): `--resp ADDR`, with or without a config file -------------
  std::unique_ptr<server::RespServer> resp;
  if (!options.resp.empty()) {
    const auto resp_listen = endpoint_flag("--resp", options.resp, err);
    if (!resp_listen) return 2;
    server::RespServerOptions resp_options;
    resp_options.workers =
        workers > 0 ? workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // SLUICE.CHECK rule key [cost]: a configured rule through the engine, sharing its state
    // with the gateway and the HTTP check API.
    resp_options.check = [e = engine.get()](std::string_view rule, std::string_view key,
                                            std::int64_t cost, core::Nanos now) {
      server::RespCheck out;
      const engine::CheckResult r = e->check(rule, key, cost, now);
      if (r.status != engine::CheckResult::Status::kDecided) {
        out.error = "ERR " + r.error;
      } else if (r.remote) {
        out.error = "ERR rule '" + std::string(rule) +
                    "' is kept in Redis; SLUICE.CHECK answers local rules only (ask "
                    "GET /v1/check/" +
                    std::string(rule) + " on the admin listener)";
      } else {
        out.decision = r.decision;
      }
      return out;
    };
    resp = std::make_unique<server::RespServer>(io, *resp_listen, std::move(resp_options));
    try {
      resp->start();
    } catch (const std::exception& e) {
      std::fprintf(err, "sluice serve: resp: %s\n", e.what());
      return 1;
    }
    metrics.emplace_back([r = resp.get()](std::string& out) { r->write_metrics(out); });
    std::fprintf(err, "sluice serve: resp listening on %s\n",
                 config::format_endpoint(resp->local_endpoint()).c_str());
  }
  // --- end RESP listener -------------------------------------------------------------------

  // --- Envoy rate limit service (issue 5): `--grpc ADDR [--rls-config FILE ...]` ----------
  std::unique_ptr<server::RlsServer> rls;  // stops (and joins gRPC's threads) when destroyed
  if (options.grpc.empty() && !options.rls_config.empty()) {
    std::fprintf(err, "sluice serve: --rls-config needs --grpc ADDR (the RLS listener)\n");
    return 2;
  }
  if (!options.grpc.empty()) {
    auto rls_listen = endpoint_flag("--grpc", options.grpc, err);
    if (!rls_listen) return 2;
    server::RlsLoaded rls_loaded = server::load_rls_config_files(options.rls_config);
    if (!rls_loaded.errors.empty()) {
      for (const auto& e : rls_loaded.errors) std::fprintf(err, "%s\n", e.format().c_str());
      return 2;
    }
    try {
      rls = std::make_unique<server::RlsServer>(options.grpc, std::move(*rls_loaded.config));
      rls->start();
    } catch (const std::invalid_argument& e) {
      std::fprintf(err, "sluice serve: rls: %s\n", e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(err, "sluice serve: grpc: %s\n", e.what());
      return 1;
    }
    metrics.emplace_back([r = rls.get()](std::string& out) { r->write_metrics(out); });
    rls_listen->port = static_cast<std::uint16_t>(rls->port());
    std::fprintf(err, "sluice serve: grpc (Envoy RLS) listening on %s\n",
                 config::format_endpoint(*rls_listen).c_str());
  }
  // --- end Envoy rate limit service --------------------------------------------------------

  // The Redis backend's metrics, summed over the gateway's loops and the admin loop's store.
  const server::AdminServer* admin_ptr = nullptr;
  metrics.emplace_back([g = gateway.get(), &admin_ptr](std::string& out) {
    std::vector<const backend::redis::Store*> stores;
    if (g != nullptr) stores = g->redis_stores();
    if (admin_ptr != nullptr && admin_ptr->redis_store() != nullptr) {
      stores.push_back(admin_ptr->redis_store());
    }
    backend::redis::write_store_metrics(out, stores);
  });
  server::AdminServer admin(io, *engine, admin_listen, options.config, std::move(metrics));
  admin_ptr = &admin;
  try {
    admin.start();
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
