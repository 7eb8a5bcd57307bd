// The `sluice` binary: subcommands and their flags. Composition root: wires parsed options to
// the commands; nothing else lives here.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "check_config_command.hpp"
#include "demo_upstream_command.hpp"
#include "help_examples.hpp"
#include "replay_command.hpp"
#include "serve_command.hpp"
#include "simulate_command.hpp"
#include "sluice/version.hpp"

namespace {

// Each subcommand's flags, bound to the options its command runs with.
CLI::App* add_replay(CLI::App& app, sluice::cli::ReplayOptions& o) {
  auto* cmd = app.add_subcommand(
      "replay", "Run a trace (t_us,key[,cost] lines on stdin) through limits; decisions on stdout");
  cmd->add_option("--limit", o.limits, "ALGORITHM:param=value,... (repeatable)")->required();
  cmd->add_option("--mode", o.mode, "reject (default) or wait");
  cmd->add_option("--max-wait", o.max_wait, "longest wait in wait mode (default: unbounded)");
  cmd->add_option("--store", o.store, "local (default)");
  cmd->add_option("--zone", o.zone,
                  "memory budget of each limit's key table, e.g. 64MiB (default: exact, "
                  "unbounded)");
  cmd->footer(sluice::cli::kReplayExample);
  return cmd;
}

CLI::App* add_simulate(CLI::App& app, sluice::cli::SimulateOptions& o) {
  auto* cmd = app.add_subcommand(
      "simulate",
      "Synthetic traffic through limits side by side: a summary, an HTML report with plots, a CSV");
  cmd->add_option("--scenario", o.scenario,
                  "a built-in (steady, burst, boundary, poisson, diurnal, flood) or a YAML file "
                  "(docs/simulate.md)");
  cmd->add_option("--limit", o.limits,
                  "ALGORITHM:param=value,... as replay takes it (repeatable; default: the "
                  "scenario's)");
  cmd->add_option("--duration", o.duration, "how long the traffic runs (default: the scenario's)");
  cmd->add_option("--bucket", o.bucket, "the series' time step (default: about 200 over the run)");
  cmd->add_option("--seed", o.seed, "of the random arrivals and keys (default 1)");
  cmd->add_option("--mode", o.mode, "reject (default) or wait");
  cmd->add_option("--max-wait", o.max_wait, "longest wait in wait mode (default: unbounded)");
  cmd->add_option("--out", o.out, "write the HTML report here, e.g. report.html");
  cmd->add_option("--csv", o.csv, "write the series here: a row per time step, limit and source");
  cmd->add_option("--svg", o.svg,
                  "write the plots as PREFIX-admitted.svg, -delay.svg, -fairness.svg");
  cmd->add_option("--trace", o.trace, "write the generated requests as sluice replay reads them");
  cmd->add_option("--progress", o.progress,
                  "a progress bar on stderr: auto (on a terminal, runs over 0.5 s), always, never");
  cmd->add_option("--plot", o.plot,
                  "the admitted plot: cumulative (running totals, the default) or rate (per "
                  "second)");
  cmd->add_flag("--list-scenarios", o.list_scenarios, "list the built-in scenarios, then exit");
  cmd->add_option("--print-scenario", o.print_scenario,
                  "print a built-in scenario's YAML (a file to start from), then exit");
  cmd->footer(sluice::cli::kSimulateExample);
  return cmd;
}

CLI::App* add_check_config(CLI::App& app, std::vector<std::string>& files, std::string& max_size) {
  auto* cmd =
      app.add_subcommand("check-config",
                         "Validate config files without serving: exit 0, or 2 with every error as "
                         "FILE:LINE: problem");
  cmd->add_option("FILE", files,
                  "a YAML config (docs/configuration.md) or an envoyproxy/ratelimit RLS file "
                  "(docs/envoy-rls.md); several may be given")
      ->required();
  cmd->footer(sluice::cli::kCheckConfigExample);
  cmd->add_option("--max-config-size", max_size,
                  "refuse a file larger than this, e.g. 64MiB (default 16MiB)");
  return cmd;
}

CLI::App* add_serve(CLI::App& app, sluice::cli::ServeOptions& o) {
  auto* cmd = app.add_subcommand(
      "serve", "Run the daemon: the HTTP gateway and the admin listener, until SIGTERM/SIGINT");
  cmd->add_option("--config", o.config, "the YAML config (docs/configuration.md)");
  cmd->add_option("--listen", o.listen, "gateway address, overrides the config's");
  cmd->add_option("--admin", o.admin, "admin address, overrides the config's");
  cmd->add_option("--check", o.check,
                  "decision API listener (/v1/check, /healthz only), overrides the "
                  "config's check");
  cmd->add_flag("--admin-insecure", o.admin_insecure,
                "allow the admin listener off loopback without an admin_auth token");
  cmd->add_option("--max-config-size", o.max_config_size,
                  "refuse a config file (at start-up and on reload) larger than this, e.g. "
                  "64MiB (default 16MiB)");
  cmd->add_option("--resp", o.resp,
                  "Redis protocol listener (CL.THROTTLE, SLUICE.CHECK), e.g. 127.0.0.1:6380");
  cmd->add_option("--grpc", o.grpc,
                  "Envoy rate limit service (gRPC RateLimitService), e.g. 127.0.0.1:8081");
  cmd->add_option("--rls-config", o.rls_config,
                  "envoyproxy/ratelimit-style YAML for --grpc (repeatable; docs/envoy-rls.md)");
  cmd->add_option("--log-level", o.log_level,
                  "the server log's least level: trace, debug, info (default), warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  cmd->add_option("--log-format", o.log_format,
                  "the server log's lines: text (default) or json (docs/logging.md)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(sluice::cli::kServeExample);
  return cmd;
}

CLI::App* add_demo_upstream(CLI::App& app, std::string& listen) {
  auto* cmd = app.add_subcommand(
      "demo-upstream", "A tiny HTTP server answering 200 \"hello from upstream\" on every path");
  cmd->add_option("--listen", listen, "address, e.g. 127.0.0.1:8081")->required();
  cmd->footer(sluice::cli::kDemoUpstreamExample);
  return cmd;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sluice: rate limits and concurrency limits for services and API gateways",
               "sluice"};
  // A bare `sluice` prints the help and exits 0 (as cargo and kubectl do): it asked for nothing
  // else. At most one subcommand per run.
  app.require_subcommand(0, 1);
  app.set_version_flag("--version",
                       "sluice " + std::string(sluice::version()) + " (commit " +
                           std::string(sluice::git_commit()) + ")",
                       "Print the version and the git commit it was built from, then exit");

  sluice::cli::ReplayOptions replay;
  auto* replay_cmd = add_replay(app, replay);
  sluice::cli::SimulateOptions simulate;
  auto* simulate_cmd = add_simulate(app, simulate);
  std::vector<std::string> config_files;
  std::string check_max_size;
  auto* check_cmd = add_check_config(app, config_files, check_max_size);
  sluice::cli::ServeOptions serve;
  auto* serve_cmd = add_serve(app, serve);
  std::string demo_listen;
  auto* demo_cmd = add_demo_upstream(app, demo_listen);
  app.footer(sluice::cli::kTopFooter);  // after the subcommands: CLI11 copies it into new ones

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = app.get_subcommands().empty()
                            ? "sluice"
                            : "sluice " + app.get_subcommands().front()->get_name();
    std::fprintf(stderr, "%s: %s\n", where.c_str(), e.what());
    return 2;
  }

  if (replay_cmd->parsed()) return sluice::cli::run_replay(replay, stdin, stdout, stderr);
  if (simulate_cmd->parsed()) {
    simulate.command = sluice::cli::shell_words(argc, argv);
    simulate.generator = "sluice " + std::string(sluice::version()) + " (commit " +
                         std::string(sluice::git_commit()) + ")";
    return sluice::cli::run_simulate(simulate, stdout, stderr);
  }
  if (check_cmd->parsed()) {
    return sluice::cli::run_check_config(config_files, check_max_size, stdout, stderr);
  }
  if (serve_cmd->parsed()) return sluice::cli::run_serve(serve, stderr);
  if (demo_cmd->parsed()) return sluice::cli::run_demo_upstream(demo_listen, stderr);
  std::fputs(app.help().c_str(), stdout);
  return 0;
}
