// Where the Redis backend lives and how to reach it: "redis://host:port/db" for one server,
// "redis-cluster://host:port,host:port" for a Redis Cluster's seeds, "redis-sentinel://
// host:port,host:port/MASTER" for a master found through Sentinel ("rediss..." with TLS), and
// the AUTH and TLS settings the config adds, which never come from the URL's text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/expected.hpp"
#include "sluice/proto/endpoint.hpp"

namespace sluice::proto::resp {

using proto::Endpoint;
using proto::format_endpoint;

inline constexpr std::uint16_t kDefaultRedisPort = 6379;
inline constexpr std::uint16_t kDefaultSentinelPort = 26379;
// Redis's `databases` may be raised to INT_MAX; SELECT refuses what the server does not have.
inline constexpr std::int64_t kMaxRedisDb = 2147483647;

// Parses "host:port", "host" (port `default_port`) or "[v6addr]:port". `what` names the value
// in errors.
core::Expected<Endpoint> parse_endpoint(std::string_view text, std::string_view what = "endpoint",
                                        std::uint16_t default_port = kDefaultRedisPort);

// AUTH on every connection: `AUTH user password` (a Redis 6 ACL user), or `AUTH password` when
// the user is "" (the default user). No password: no AUTH.
struct StoreAuth {
  std::string user;
  std::string password;
  friend bool operator==(const StoreAuth&, const StoreAuth&) = default;
};

// TLS through OpenSSL. Verification is on unless turned off: the server's chain against the CA
// file or directory (the system's store when neither is given), and its name against
// server_name (the host connected to when ""), which is also sent as SNI.
struct StoreTls {
  bool enabled = false;
  bool verify = true;
  std::string ca_file;
  std::string ca_dir;
  std::string cert_file;  // a client certificate, for servers with tls-auth-clients
  std::string key_file;
  std::string server_name;
  // Of the files' contents as the config read them: a certificate renewed at the same path is
  // a change, which a reload takes.
  std::uint64_t fingerprint = 0;
  friend bool operator==(const StoreTls&, const StoreTls&) = default;
};

struct StoreUrl {
  bool cluster = false;
  bool sentinel = false;
  // Standalone: exactly one server; cluster: its seed nodes; sentinel: the sentinels.
  std::vector<Endpoint> seeds;
  std::string master;  // sentinel: the name the sentinels know the master by
  std::int64_t db = 0;
  StoreAuth auth;           // the URL gives at most the user ("redis://USER@host")
  StoreAuth sentinel_auth;  // the sentinels' own AUTH (never from the URL)
  StoreTls tls;             // "rediss" turns it on; the rest comes from the config
  friend bool operator==(const StoreUrl&, const StoreUrl&) = default;
};

// Parses "redis[s]://[USER@]HOST[:PORT][/DB]", "redis[s]-cluster://[USER@]HOST[:PORT][,...]"
// and "redis[s]-sentinel://[USER@]HOST[:PORT][,...]/MASTER[/DB]" (sentinels on port 26379 by
// default). A password in the URL is refused: it would sit in the config's text. Errors name
// the part that is wrong ("unknown scheme 'http'", "bad port 'x' in seed 2 '...'").
core::Expected<StoreUrl> parse_store_url(std::string_view text);

// The URL again, in the canonical form parse_store_url accepts: no secret, no TLS file.
std::string format_store_url(const StoreUrl& url);

// A Sentinel master name: 1 to 256 printable bytes without spaces or '/'.
std::optional<std::string> master_name_problem(std::string_view name);

}  // namespace sluice::proto::resp
