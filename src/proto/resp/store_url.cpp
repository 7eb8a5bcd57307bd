// parse_store_url and friends (sluice/proto/resp/store_url.hpp).
#include "sluice/proto/resp/store_url.hpp"

#include <charconv>

namespace sluice::proto::resp {

namespace {

struct Scheme {
  std::string_view name;
  bool tls;
  bool cluster;
  bool sentinel;
};
constexpr Scheme kSchemes[] = {
    {"redis", false, false, false},         {"rediss", true, false, false},
    {"redis-cluster", false, true, false},  {"rediss-cluster", true, true, false},
    {"redis-sentinel", false, false, true}, {"rediss-sentinel", true, false, true},
};
constexpr std::string_view kExpected =
    "redis://HOST:PORT[/DB], redis-cluster://HOST:PORT,HOST:PORT or "
    "redis-sentinel://HOST:PORT,HOST:PORT/MASTER (rediss... for TLS)";

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// "/DB" after the hosts: a whole number in 0..kMaxRedisDb.
core::Expected<std::int64_t> parse_db(std::string_view text, std::string_view url) {
  std::int64_t db = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, db);
  if (text.empty() || ec != std::errc() || ptr != end || db < 0 || db > kMaxRedisDb) {
    return core::make_error("bad database number " + quoted(text) + " in Redis URL " + quoted(url) +
                            " (expected 0 to " + std::to_string(kMaxRedisDb) + ")");
  }
  return db;
}

// The path after the hosts: "[DB]" (standalone), "" (cluster), "MASTER[/DB]" (sentinel).
std::optional<std::string> read_path(std::string_view path, std::string_view text, StoreUrl& url) {
  if (url.sentinel) {
    const auto slash = path.find('/');
    const auto name = path.substr(0, slash);
    if (name.empty()) {
      return "redis-sentinel:// needs the master's name after the sentinels "
             "(redis-sentinel://HOST:PORT,HOST:PORT/MASTER) in " +
             quoted(text);
    }
    if (auto problem = master_name_problem(name)) return *problem + " in " + quoted(text);
    url.master = std::string(name);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  }
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return std::nullopt;
  auto db = parse_db(path, text);
  if (!db) return db.error();
  if (url.cluster && *db != 0) {
    return "Redis Cluster has only database 0, so " + quoted(text) + " cannot select database " +
           std::to_string(*db);
  }
  url.db = *db;
  return std::nullopt;
}

}  // namespace

core::Expected<Endpoint> parse_endpoint(std::string_view text, std::string_view what,
                                        std::uint16_t default_port) {
  const std::string where = std::string(what) + " " + quoted(text);
  if (text.empty()) return core::make_error("empty " + std::string(what));
  Endpoint e{std::string(), default_port};
  std::string_view port_text;
  bool has_port = false;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return core::make_error("unclosed '[' in " + where);
    e.host = std::string(text.substr(1, close - 1));
    const auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return core::make_error("expected ':port' after ']' in " + where);
      port_text = rest.substr(1);
      has_port = true;
    }
  } else {
    const auto colon = text.rfind(':');
    if (colon != std::string_view::npos) {
      if (text.find(':') != colon) {
        return core::make_error("an IPv6 address needs brackets ([addr]:port) in " + where);
      }
      port_text = text.substr(colon + 1);
      has_port = true;
      text = text.substr(0, colon);
    }
    e.host = std::string(text);
  }
  if (e.host.empty()) return core::make_error("empty host in " + where);
  for (const char c : e.host) {
    if (c == '/' || c == '@' || c == '?' || c == '#' || c == ' ' || c == ',') {
      return core::make_error("bad character '" + std::string(1, c) + "' in the host of " + where);
    }
  }
  if (has_port) {
    unsigned port = 0;
    const auto* end = port_text.data() + port_text.size();
    const auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
    if (port_text.empty() || ec != std::errc() || ptr != end || port == 0 || port > 65535) {
      return core::make_error("bad port " + quoted(port_text) + " in " + where +
                              " (expected 1-65535)");
    }
    e.port = static_cast<std::uint16_t>(port);
  }
  return e;
}

core::Expected<StoreUrl> parse_store_url(std::string_view text) {
  StoreUrl url;
  const auto sep = text.find("://");
  if (sep == std::string_view::npos) {
    return core::make_error("Redis URL " + quoted(text) + " has no scheme (expected " +
                            std::string(kExpected) + ")");
  }
  const std::string_view scheme = text.substr(0, sep);
  const Scheme* found = nullptr;
  for (const auto& s : kSchemes) {
    if (s.name == scheme) found = &s;
  }
  if (found == nullptr) {
    return core::make_error("unknown scheme " + quoted(scheme) + " in Redis URL " + quoted(text) +
                            " (expected redis or redis-cluster, redis-sentinel, or rediss, "
                            "rediss-cluster, rediss-sentinel for TLS)");
  }
  url.tls.enabled = found->tls;
  url.cluster = found->cluster;
  url.sentinel = found->sentinel;
  std::string_view rest = text.substr(sep + 3);
  const auto slash = rest.find('/');
  std::string_view hosts = rest.substr(0, slash);
  if (const auto at = hosts.rfind('@'); at != std::string_view::npos) {
    const auto user = hosts.substr(0, at);
    if (user.find(':') != std::string_view::npos) {
      return core::make_error("a password in the Redis URL " +
                              quoted(std::string(text.substr(0, sep + 3)) + "...") +
                              " would sit in the config's text; give the user alone "
                              "(USER@HOST) and the password in redis.password_file or "
                              "redis.password_env");
    }
    if (user.empty()) return core::make_error("empty user before '@' in Redis URL " + quoted(text));
    url.auth.user = std::string(user);
    hosts = hosts.substr(at + 1);
  }
  if (hosts.empty()) return core::make_error("Redis URL " + quoted(text) + " names no host");
  const std::uint16_t port = url.sentinel ? kDefaultSentinelPort : kDefaultRedisPort;
  const bool many = url.cluster || url.sentinel;
  std::size_t index = 1;
  while (true) {
    const auto comma = hosts.find(',');
    if (!many && comma != std::string_view::npos) {
      return core::make_error(std::string(scheme) +
                              ":// takes one host; use redis-cluster:// for several (in " +
                              quoted(text) + ")");
    }
    const std::string what = url.cluster    ? "seed " + std::to_string(index)
                             : url.sentinel ? "sentinel " + std::to_string(index)
                                            : std::string("host");
    auto e = parse_endpoint(hosts.substr(0, comma), what, port);
    if (!e) return core::make_error(e.error() + " in Redis URL " + quoted(text));
    url.seeds.push_back(std::move(e).value());
    if (comma == std::string_view::npos) break;
    hosts = hosts.substr(comma + 1);
    ++index;
  }
  const std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (auto problem = read_path(path, text, url)) return core::make_error(*problem);
  return url;
}

std::string format_store_url(const StoreUrl& url) {
  std::string out = url.tls.enabled ? "rediss" : "redis";
  out += url.cluster ? "-cluster://" : url.sentinel ? "-sentinel://" : "://";
  if (!url.auth.user.empty()) out += url.auth.user + "@";
  for (std::size_t i = 0; i < url.seeds.size(); ++i) {
    if (i > 0) out += ',';
    out += format_endpoint(url.seeds[i]);
  }
  if (url.sentinel) out += "/" + url.master;
  if (url.db != 0) out += "/" + std::to_string(url.db);
  return out;
}

std::optional<std::string> master_name_problem(std::string_view name) {
  if (name.empty()) return "the master's name is empty";
  if (name.size() > 256) return "the master's name is longer than 256 bytes";
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f || c == '/' || c == ',' || c == '@') {
      return "the master's name " + quoted(name) +
             " may hold no spaces, control characters, '/', ',' or '@'";
    }
  }
  return std::nullopt;
}

}  // namespace sluice::proto::resp
