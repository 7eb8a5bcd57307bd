// Where the Redis backend lives, as a URL: "redis://host:port" for one server,
// "redis-cluster://host:port,host:port" for the seed nodes of a Redis Cluster.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/expected.hpp"
#include "sluice/proto/endpoint.hpp"

namespace sluice::proto::resp {

using proto::Endpoint;
using proto::format_endpoint;

inline constexpr std::uint16_t kDefaultRedisPort = 6379;

// Parses "host:port", "host" (port 6379) or "[v6addr]:port". `what` names the value in errors.
core::Expected<Endpoint> parse_endpoint(std::string_view text, std::string_view what = "endpoint");

struct StoreUrl {
  bool cluster = false;
  std::vector<Endpoint> seeds;  // standalone: exactly one
};

// Parses "redis://host[:port]" or "redis-cluster://host[:port][,host[:port]...]". Errors name
// the part that is wrong ("unknown scheme 'http'", "bad port 'x' in seed 2 '...'").
core::Expected<StoreUrl> parse_store_url(std::string_view text);

// The URL again, in the canonical form parse_store_url accepts.
std::string format_store_url(const StoreUrl& url);

}  // namespace sluice::proto::resp
