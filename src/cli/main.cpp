// The `sluice` binary: subcommands and their flags. Composition root: wires parsed options to
// the commands; nothing else lives here.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "check_config_command.hpp"
#include "help_examples.hpp"
#include "replay_command.hpp"
#include "serve_command.hpp"
#include "sluice/version.hpp"

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
  auto* replay_cmd = app.add_subcommand(
      "replay", "Run a trace (t_us,key[,cost] lines on stdin) through limits; decisions on stdout");
  replay_cmd->add_option("--limit", replay.limits, "ALGORITHM:param=value,... (repeatable)")
      ->required();
  replay_cmd->add_option("--mode", replay.mode, "reject (default) or wait");
  replay_cmd->add_option("--max-wait", replay.max_wait,
                         "longest wait in wait mode (default: unbounded)");
  replay_cmd->add_option("--store", replay.store, "local (default)");
  replay_cmd->add_option("--zone", replay.zone,
                         "memory budget of each limit's key table, e.g. 64MiB (default: exact, "
                         "unbounded)");
  replay_cmd->footer(sluice::cli::kReplayExample);

  std::vector<std::string> config_files;
  auto* check_cmd =
      app.add_subcommand("check-config",
                         "Validate config files without serving: exit 0, or 2 with every error as "
                         "FILE:LINE: problem");
  check_cmd
      ->add_option("FILE", config_files,
                   "a YAML config (docs/configuration.md) or an envoyproxy/ratelimit RLS file "
                   "(docs/envoy-rls.md); several may be given")
      ->required();
  check_cmd->footer(sluice::cli::kCheckConfigExample);
  std::string check_max_size;
  check_cmd->add_option("--max-config-size", check_max_size,
                        "refuse a file larger than this, e.g. 64MiB (default 16MiB)");

  sluice::cli::ServeOptions serve;
  auto* serve_cmd = app.add_subcommand(
      "serve", "Run the daemon: the HTTP gateway and the admin listener, until SIGTERM/SIGINT");
  serve_cmd->add_option("--config", serve.config, "the YAML config (docs/configuration.md)");
  serve_cmd->add_option("--listen", serve.listen, "gateway address, overrides the config's");
  serve_cmd->add_option("--admin", serve.admin, "admin address, overrides the config's");
  serve_cmd->add_option("--check", serve.check,
                        "decision API listener (/v1/check, /healthz only), overrides the "
                        "config's check");
  serve_cmd->add_flag("--admin-insecure", serve.admin_insecure,
                      "allow the admin listener off loopback without an admin_auth token");
  serve_cmd->add_option("--max-config-size", serve.max_config_size,
                        "refuse a config file (at start-up and on reload) larger than this, e.g. "
                        "64MiB (default 16MiB)");
  serve_cmd->add_option("--resp", serve.resp,
                        "Redis protocol listener (CL.THROTTLE, SLUICE.CHECK), e.g. 127.0.0.1:6380");
  serve_cmd->add_option("--grpc", serve.grpc,
                        "Envoy rate limit service (gRPC RateLimitService), e.g. 127.0.0.1:8081");
  serve_cmd->add_option(
      "--rls-config", serve.rls_config,
      "envoyproxy/ratelimit-style YAML for --grpc (repeatable; docs/envoy-rls.md)");
  serve_cmd->footer(sluice::cli::kServeExample);

  std::string demo_listen;
  auto* demo_cmd = app.add_subcommand(
      "demo-upstream", "A tiny HTTP server answering 200 \"hello from upstream\" on every path");
  demo_cmd->add_option("--listen", demo_listen, "address, e.g. 127.0.0.1:8081")->required();
  demo_cmd->footer(sluice::cli::kDemoUpstreamExample);
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
  if (check_cmd->parsed()) {
    return sluice::cli::run_check_config(config_files, check_max_size, stdout, stderr);
  }
  if (serve_cmd->parsed()) return sluice::cli::run_serve(serve, stderr);
  if (demo_cmd->parsed()) return sluice::cli::run_demo_upstream(demo_listen, stderr);
  std::fputs(app.help().c_str(), stdout);
  return 0;
}
