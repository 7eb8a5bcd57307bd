// `sluice demo-upstream`: a tiny HTTP/1.1 server that answers 200 "hello from upstream\n" on
// every path, with keep-alive. The upstream that `make run`, the tests and the gateway
// benchmark put behind the gateway; not a general server (request bodies are read and dropped).
#pragma once

#include <cstdio>

#include "sluice/config/rule_set.hpp"

namespace sluice::server {

// Serves until SIGINT or SIGTERM, then returns 0; 1 when it cannot listen (said on `err`).
// Says `sluice demo-upstream: listening on ADDR` on `err` once bound.
int run_demo_upstream(const config::Endpoint& listen, std::FILE* err);

}  // namespace sluice::server
