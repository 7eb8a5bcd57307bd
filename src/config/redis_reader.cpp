// The `redis:` section (readers.hpp): where Redis is (a url, or sentinels and a master), the
// database, AUTH with its secrets read from a file or the environment, TLS, and the defaults of
// rules kept in Redis. The combinations are checked after (checks.cpp, check_redis_store).
#include <sys/stat.h>

#include <functional>

#include "readers.hpp"
#include "sluice/proto/resp/store_url.hpp"

namespace sluice::config::internal {
namespace {

// A PEM certificate chain or key is a few KiB; a CA bundle of the whole web is about 200 KiB.
constexpr std::size_t kMaxTlsFile = 4u << 20;

// A sentinel's address: port 26379 unless given.
core::Expected<Endpoint> parse_sentinel(const std::string& t) {
  return proto::resp::parse_endpoint(t, "sentinel", proto::resp::kDefaultSentinelPort);
}

core::Expected<std::string> parse_master(const std::string& t) {
  if (auto problem = proto::resp::master_name_problem(t)) return core::make_error(*problem);
  return t;
}

// A name for SNI and the certificate check: a host name or an IP address, as written.
core::Expected<std::string> parse_server_name(const std::string& t) {
  if (t.empty() || t.size() > 253 ||
      t.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") !=
          std::string::npos) {
    return core::make_error(
        "expected a host name or an IP address (letters, digits, '.', '-', "
        "':'), got " +
        quoted(t));
  }
  return t;
}

// The user and the secret of one AUTH: `<prefix>user`, `<prefix>password_file|env`.
RedisSecret read_auth(Section& r, const std::string& prefix) {
  RedisSecret out;
  const std::string user = prefix + "user";
  const std::string file = prefix + "password_file";
  const std::string env = prefix + "password_env";
  if (auto u = r.text(user)) {
    if (u->empty() || u->find_first_of(" \t\r\n") != std::string::npos) {
      r.fail(user, "expected an ACL user name without spaces, got " + quoted(*u));
    } else {
      out.user = *u;
    }
  }
  if (auto f = r.text(file)) {
    if (f->empty()) {
      r.fail(file, "needs the path of a file holding the password");
    } else {
      out.password_file = *f;
    }
  }
  if (auto e = r.parsed<std::string>(env, parse_env_name)) out.password_env = *e;
  if (auto secret = read_secret(r, file, out.password_file, env, out.password_env)) {
    out.password = *secret;
  }
  out.line = r.line(out.password_file.empty() ? env : file);
  return out;
}

// A file TLS needs, read once here (under a cap) so that a missing or unreadable one is an
// error at its line now, not a refused connection later.
std::optional<std::string> read_tls_file(Section& t, std::string_view field, std::string_view what,
                                         std::uint64_t& fingerprint) {
  auto path = t.text(field);
  if (!path) return std::nullopt;
  if (path->empty()) {
    t.fail(field, "needs the path of " + std::string(what));
    return std::nullopt;
  }
  auto text = read_config_file(*path, kMaxTlsFile, what);
  if (!text) {
    t.fail(field, "cannot read " + quoted(*path) + ": " + text.error());
    return std::nullopt;
  }
  fingerprint = fingerprint * 1000003u ^ std::hash<std::string>{}(*text);
  return path;
}

RedisTls read_tls(Section& t, int line) {
  RedisTls tls;
  tls.line = line;
  if (auto v = t.flag("verify")) tls.verify = *v;
  std::uint64_t& fp = tls.fingerprint;
  if (auto f = read_tls_file(t, "ca_file", "a CA certificate file", fp)) tls.ca_file = *f;
  if (auto d = t.text("ca_dir")) {
    struct stat st {};
    if (d->empty() || ::stat(d->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      t.fail("ca_dir", quoted(*d) + " is not a directory (a CA directory made by c_rehash)");
    } else {
      tls.ca_dir = *d;
    }
  }
  if (auto f = read_tls_file(t, "cert_file", "a client certificate file", fp)) tls.cert_file = *f;
  if (auto f = read_tls_file(t, "key_file", "a client key file", fp)) tls.key_file = *f;
  if (auto n = t.parsed<std::string>("server_name", parse_server_name)) tls.server_name = *n;
  return tls;
}

}  // namespace

std::optional<RedisSettings> read_redis(Section& s) {
  auto r = s.section("redis", {"url", "sentinels", "master", "db", "user", "password_file",
                               "password_env", "sentinel_user", "sentinel_password_file",
                               "sentinel_password_env", "tls", "timeout", "storage", "on_failure",
                               "local_share", "lease", "lease_ttl", "cache_denials"});
  if (!r) return std::nullopt;
  RedisSettings redis;
  redis.line = s.line("redis");
  if (auto url = r->text("url")) redis.url = *url;
  redis.sentinels = r->parsed_list<Endpoint>("sentinels", parse_sentinel);
  if (auto m = r->parsed<std::string>("master", parse_master)) redis.master = *m;
  if (auto db = r->number("db", 0, proto::resp::kMaxRedisDb)) redis.db = *db;
  redis.auth = read_auth(*r, "");
  redis.sentinel_auth = read_auth(*r, "sentinel_");
  if (auto t = r->section(
          "tls", {"verify", "ca_file", "ca_dir", "cert_file", "key_file", "server_name"})) {
    redis.tls = read_tls(*t, r->line("tls"));
  }
  if (auto t = r->duration("timeout")) redis.timeout = *t;
  // 0s turns the cache off, so unlike other durations it may be 0.
  if (auto d = r->parsed<core::Nanos>("cache_denials", core::parse_duration)) {
    redis.cache_denials = *d;
  }
  if (auto st = r->choice("storage", kStorages)) redis.default_storage = *st;
  const RedisOptionFields o = read_redis_options(*r);
  if (o.on_failure) redis.defaults.on_failure = *o.on_failure;
  if (o.local_share) redis.defaults.local_share = *o.local_share;
  if (o.lease) redis.defaults.lease = *o.lease;
  if (o.lease_ttl) redis.defaults.lease_ttl = *o.lease_ttl;
  return redis;
}

}  // namespace sluice::config::internal
