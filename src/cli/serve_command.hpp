// `sluice serve` (DESIGN.md): the daemon. Loads the config, starts the gateway and the admin
// listener, and on SIGTERM/SIGINT shuts down gracefully.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace sluice::cli {

struct ServeOptions {
  std::string config;  // "": no config file (no routes; the gateway only with --listen)
  std::string listen;  // "": the config's `listen`
  std::string admin;   // "": the config's `admin` (default 127.0.0.1:9090)
  std::string check;   // "": the config's `check` (none: the decision API on the admin only)
  bool admin_insecure = false;  // allow the admin listener off loopback without a token
  std::string resp;             // "": no Redis protocol listener (CL.THROTTLE, SLUICE.CHECK)
  std::string grpc;             // "": no Envoy rate limit service (gRPC)
  std::vector<std::string> rls_config;  // its envoyproxy/ratelimit-style YAML files
  std::string max_config_size;          // "": config::kDefaultMaxConfigSize ("16MiB")
  std::string log_level = "info";       // the server log (docs/logging.md, "Server log")
  std::string log_format = "text";
};

// Runs until SIGTERM or SIGINT, then stops accepting, lets requests in flight finish (at most
// kDrainSeconds) and returns 0. Returns 2 for a bad config or flag (every error on `err`), 1
// when a listener cannot be bound.
int run_serve(const ServeOptions& options, std::FILE* err);

}  // namespace sluice::cli
