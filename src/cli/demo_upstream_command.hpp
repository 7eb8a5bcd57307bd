// `sluice demo-upstream`: a tiny HTTP/1.1 server that answers 200 "hello from upstream\n" on
// every path, with keep-alive. The upstream that `make run`, the tests and the gateway
// benchmark put behind the gateway; not a general server (request bodies are read and dropped).
#pragma once

#include <cstdio>
#include <string>

namespace sluice::cli {

// Serves on `listen` (HOST:PORT) until SIGINT or SIGTERM, then returns 0; 2 for a bad address,
// 1 when it cannot listen (each said on `err`). Says `sluice demo-upstream: listening on ADDR`
// on `err` once bound.
int run_demo_upstream(const std::string& listen, std::FILE* err);

}  // namespace sluice::cli
