// The `sluice` binary: subcommands and their flags. Composition root: wires parsed options to
// the commands; nothing else lives here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "replay_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Sluice: rate limits and concurrency limits for services and API gateways",
               "sluice"};
  app.require_subcommand(1);

  sluice::cli::ReplayOptions replay;
  auto* replay_cmd = app.add_subcommand(
      "replay", "Run a trace (t_us,key[,cost] lines on stdin) through limits; decisions on stdout");
  replay_cmd->add_option("--limit", replay.limits, "ALGORITHM:param=value,... (repeatable)")
      ->required();
  replay_cmd->add_option("--mode", replay.mode, "reject (default) or wait");
  replay_cmd->add_option("--max-wait", replay.max_wait, "longest wait in wait mode (default: unbounded)");
  replay_cmd->add_option("--store", replay.store, "local (default)");
  replay_cmd->add_option("--zone", replay.zone,
                         "memory budget of each limit's key table, e.g. 64MiB (default: exact, "
                         "unbounded)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = app.get_subcommands().empty() ? "sluice" : "sluice " + app.get_subcommands().front()->get_name();
    std::fprintf(stderr, "%s: %s\n", where.c_str(), e.what());
    return 2;
  }

  if (replay_cmd->parsed()) return sluice::cli::run_replay(replay, stdin, stdout, stderr);
  return 2;
}
