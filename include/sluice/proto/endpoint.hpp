// A host and port, as every listener, upstream and Redis node is named: one type for the config
// and the Redis client, written one way ("host:port", "[v6]:port", as Redis writes nodes).
#pragma once

#include <cstdint>
#include <string>

namespace sluice::proto {

struct Endpoint {
  std::string host;  // an IPv4/IPv6 address or a host name; "" for every address (listeners)
  std::uint16_t port = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

inline std::string format_endpoint(const Endpoint& e) {
  const bool v6 = e.host.find(':') != std::string::npos;
  return (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

}  // namespace sluice::proto
