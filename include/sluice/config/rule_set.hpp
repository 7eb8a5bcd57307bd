// The configuration as data: listeners, upstreams, routes and rules (limit + key + action).
// A config file and the admin API both produce this validated value; the engine runs one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/config/adaptive_concurrency.hpp"
#include "sluice/config/breaker_config.hpp"
#include "sluice/config/rls.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/core/rate.hpp"
#include "sluice/core/time.hpp"
#include "sluice/proto/endpoint.hpp"
#include "sluice/proto/http/ip_address.hpp"
#include "sluice/proto/http/ratelimit_fields.hpp"
#include "sluice/proto/http/request_target.hpp"
#include "sluice/proto/resp/store_url.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::config {

// "127.0.0.1:8080", "[::1]:8080", ":8080" (all addresses).
using Endpoint = proto::Endpoint;

// An IPv4 or IPv6 network, "10.0.0.0/8", "::1/128"; a bare address is a /32 or /128.
using Cidr = proto::http::Cidr;

struct Upstream {
  std::string name;
  std::vector<Endpoint> servers;                          // round robin
  int max_fails = 1;                                      // failures before a server is skipped
  core::Nanos fail_timeout = 10 * core::kNanosPerSecond;  // how long it is skipped
  int line = 0;
};

struct RouteMatch {
  std::string host;                  // exact Host (port ignored); empty: any
  std::string path_prefix;           // empty: any
  std::string path_exact;            // exclusive with path_prefix
  std::vector<std::string> methods;  // empty: any
};

enum class Combine {
  kAll,    // every rule must allow; a denial charges none
  kFirst,  // global first, then per key: the first rule that allows decides
};

struct Route {
  std::string name;
  RouteMatch match;
  std::string upstream;               // name in RuleSet::upstreams; empty with `respond`
  std::optional<int> respond_status;  // answer locally (demo, health) instead of proxying
  std::string respond_body;
  std::vector<std::string> rules;  // names in RuleSet::rules, in order
  Combine combine = Combine::kAll;
  // `request_buffering: on|off`: the body is read (up to http.max_buffered_body) before an
  // upstream connection is taken, or streamed as it comes (uploads that must stream).
  bool request_buffering = true;
  std::optional<BreakerConfig> breaker;  // `breaker:` (breaker_config.hpp)
  // A concurrency limit found from the upstream's latency (docs/overload.md).
  std::optional<AdaptiveConcurrency> adaptive;
  int line = 0;
};

// One part of a rule's key; several parts are joined with '|' into one key.
struct KeyPart {
  enum class Kind { kClientIp, kHeader, kQuery, kCookie, kPath, kRoute, kConst, kMethod, kHost };
  Kind kind = Kind::kClientIp;
  std::string name;  // header/query/cookie name, or the constant
  // client_ip/N[/M]: the network of that many leading bits stands for the client (Envoy's
  // masked_remote_address), so one IPv6 /64 is one client. 32 and 128: the whole address.
  int v4_prefix = 32;
  int v6_prefix = 128;
  friend bool operator==(const KeyPart&, const KeyPart&) = default;
};

enum class Action {
  kReject,  // deny with `status` and `body`
  kDelay,   // hold the request up to `max_wait`, then forward (nginx burst without nodelay)
  kDryRun,  // decide and count, never block (shadow mode)
};

enum class OnMissingKey { kSkip, kDeny };

// How the access log shows a rule's key (`log_key:`): as it is, or as a hash (64 bits of XXH3-128,
// 16 hex digits) that tells keys apart without writing them out.
enum class LogKey { kRaw, kHash };

// `access_log: {format:}`: one line of space-separated columns, or one JSON object per line.
enum class AccessLogFormat { kText, kJson };

// What a rule kept in Redis does when Redis errors, times out or its breaker is open
// (docs/distributed.md): allow, deny, or decide with an in-process limiter at `local_share`.
enum class FailurePolicy { kOpen, kClosed, kLocal };

// Where a rule's state lives: in this process, or in Redis shared by every instance.
enum class Storage { kLocal, kRedis };

// How a Redis-kept rule behaves (docs/distributed.md): its failure policy, leasing.
struct RedisRuleOptions {
  FailurePolicy on_failure = FailurePolicy::kOpen;
  double local_share = 1.0;  // on_failure: local
  std::int64_t lease = 0;    // permits per round trip; 0 = exact
  core::Nanos lease_ttl = 100 * core::kNanosPerMilli;
  friend bool operator==(const RedisRuleOptions&, const RedisRuleOptions&) = default;
};

// `redis.tls`: TLS to Redis through OpenSSL (docs/distributed.md, "Redis as it is deployed").
// Present (or a rediss:// url): TLS on. The files are read by the client at each connect.
struct RedisTls {
  bool verify = true;             // the server's chain and name
  std::string ca_file;            // PEM; neither file nor dir: the system's trust store
  std::string ca_dir;             // a c_rehash'ed directory of PEM certificates
  std::string cert_file;          // the client's certificate (tls-auth-clients on the server)
  std::string key_file;           // its key; with cert_file
  std::string server_name;        // SNI and the name checked; "": the host connected to
  std::uint64_t fingerprint = 0;  // of the files' contents (a renewed certificate is a change)
  int line = 0;
};

// A secret named by the config, read at each load: from a file (its first line) or an
// environment variable, never written in the config text or written back.
struct RedisSecret {
  std::string user;           // "" : the default user (AUTH password)
  std::string password_file;  // as written
  std::string password_env;
  std::string password;  // what was read; "" = no AUTH
  int line = 0;          // of password_file or password_env
};

// The shared store: `redis: {url | sentinels + master, db, user, password_file | password_env,
// tls, timeout, storage, on_failure, local_share, lease, lease_ttl, cache_denials}`.
struct RedisSettings {
  // redis[s]://HOST:PORT[/DB], redis[s]-cluster://HOST:PORT[,...] or
  // redis[s]-sentinel://HOST:PORT[,...]/MASTER[/DB]; or "" with `sentinels` and `master`.
  std::string url;
  std::vector<Endpoint> sentinels;  // the `sentinels: [...]` form (port 26379 by default)
  std::string master;
  std::optional<std::int64_t> db;  // overrides the url's /DB
  RedisSecret auth;                // the user may also come from the url (USER@HOST)
  RedisSecret sentinel_auth;       // `sentinel_user`, `sentinel_password_file|env`
  std::optional<RedisTls> tls;
  core::Nanos timeout = 50 * core::kNanosPerMilli;
  Storage default_storage = Storage::kLocal;  // for rules that do not say
  RedisRuleOptions defaults;                  // for rules that do not say
  // A key Redis refused until T is refused here until T, or for this long if sooner, without
  // asking (envoyproxy/ratelimit's local over-limit cache); 0: every decision asks Redis. The
  // bound is how long a reset made in Redis itself (a DEL, a FLUSHDB) can go unseen.
  core::Nanos cache_denials = core::kNanosPerSecond;
  int line = 0;

  // Whether a store is named (a url, or sentinels).
  bool configured() const { return !url.empty() || !sentinels.empty(); }
  // The store as the Redis client takes it: the url (or the sentinels and master) with the
  // db, the secrets read and the TLS settings folded in; the url's error when it is bad.
  core::Expected<proto::resp::StoreUrl> store_url() const;
};

inline constexpr std::int64_t kDefaultMaxPermits = 100000;

// A limit a rule applies instead of its own to some requests: a tier's (`tiers: {pro: ...}`,
// chosen by the rule's `tier` attribute) or one key's (`overrides: {"customer-42": ...}`).
// Each is compiled apart, with its own table: a key is charged against the one it selects.
struct LimitVariant {
  std::string name;        // the tier's name, or the key
  std::string limit_text;  // as written
  spec::LimitSpec limit;
  int line = 0;
  friend bool operator==(const LimitVariant&, const LimitVariant&) = default;
};

// `on_change:` what a change of a rule's limit (PUT, reload, a tier's or override's change)
// does to the state of keys already seen (Bucket4j's TokensInheritanceStrategy): carried over as
// the algorithm's reference does (keep, the default), forgotten (reset: every key starts full),
// or rescaled so each key keeps the same fraction of its capacity (proportional).
enum class OnChange { kKeep, kReset, kProportional };

// The tier of `tiers:` a request falls into when its attribute is missing or names no tier.
inline constexpr std::string_view kDefaultTier = "default";

struct Rule {
  std::string name;
  std::string limit_text;  // as written: "token-bucket:rate=10/s,burst=20"
  spec::LimitSpec limit;
  std::vector<KeyPart> key;
  Action action = Action::kReject;
  core::Nanos max_wait = 0;  // kDelay: the longest hold
  int status = 429;          // over the limit
  std::string body = "Too Many Requests\n";
  OnMissingKey on_missing_key = OnMissingKey::kSkip;
  int missing_key_status = 429;   // on_missing_key: deny (its own status: a 401 for a missing
                                  // API key need not be the over-limit answer too)
  LogKey log_key = LogKey::kRaw;  // the access log's key column: raw, or hashed
  // Concurrency: how long the decision service keeps a permit that is never given back.
  core::Nanos permit_ttl = 60 * core::kNanosPerSecond;
  // Concurrency: the most permits the decision service holds for this rule's callers at once
  // (about 200 bytes each); one more is refused. Redis rules keep theirs in Redis.
  std::int64_t max_permits = kDefaultMaxPermits;
  // on_deny: {block: D}: a key this rule refuses is refused for D from then on, without
  // deciding the limit (a ban). Unset: no block. Rate rules only (checks.cpp); a Redis rule's
  // block is kept in Redis, for every instance.
  std::optional<core::Nanos> block;
  // `tier: header:X-Plan` and `tiers: {free: ..., pro: ...}`: the attribute whose value names
  // the tier (read in the gateway only from trusted_proxies peers). `tiers` holds every tier,
  // `default` (required) among them, and `limit` is then the default's.
  std::optional<KeyPart> tier;
  std::vector<LimitVariant> tiers;
  std::vector<LimitVariant> overrides;  // by key text ("part|part"), over any tier
  // A rule kept in Redis: the overrides set through any instance's admin API, kept in Redis
  // for every instance (engine/shared_overrides.hpp), never written to the file. Over a file
  // override of the same key.
  std::vector<LimitVariant> shared_overrides;
  OnChange on_change = OnChange::kKeep;
  // count_denied: a request this rule refuses is charged as if admitted (Kong's penalty;
  // core/denied_charge.hpp says per algorithm what that does). Default: refusals are free.
  bool count_denied = false;
  // A cost known only after the response (docs/configuration.md#cost-after-the-response):
  // `cost_from: response_header:NAME` charges the cost the upstream states in NAME, settling
  // what admission reserved (`reserve`, default 1: one more request must fit); `count_if:
  // {status: [...]}` charges only responses with those statuses ("401", or a class "4xx").
  std::string cost_from;  // the header's name; empty: the cost is known at admission
  std::optional<std::int64_t> reserve;
  std::vector<std::string> count_if_status;  // as written; empty: every response counts
  bool settles() const { return !cost_from.empty() || !count_if_status.empty(); }
  std::int64_t reserved() const { return reserve.value_or(1); }
  std::optional<Storage> storage;  // unset: RedisSettings::default_storage
  // Set fields override RedisSettings::defaults (written back as given).
  std::optional<FailurePolicy> on_failure;
  std::optional<double> local_share;
  std::optional<std::int64_t> lease;
  std::optional<core::Nanos> lease_ttl;
  int line = 0;
  friend bool operator==(const Rule&, const Rule&) = default;
};

// `resp:` — the Redis-protocol listener (CL.THROTTLE, SLUICE.*) and where CL.THROTTLE keeps
// its state: here, or in Redis (`redis:`) so that several instances share each key.
struct RespSettings {
  std::optional<Endpoint> listen;  // `serve --resp` overrides
  Storage storage = Storage::kLocal;
  std::optional<FailurePolicy> on_failure;  // unset: redis.on_failure
  std::optional<double> local_share;        // unset: redis.local_share
  std::size_t memory = 64u << 20;           // CL.THROTTLE's local table (16 B a key)
  // Connections held at once (Redis's maxclients and its default); one more is told
  // "-ERR max number of clients reached" and closed. Read at each accept: a reload applies.
  std::int64_t max_clients = 10000;
  // AUTH: clients must authenticate when a password is set, read from a file or from an
  // environment variable at load (the secret itself is never written back).
  std::string user = "default";
  std::string password_file;
  std::string password_env;
  std::string password;   // the secret read from one of them; "" = no AUTH
  int password_line = 0;  // the line of password_file or password_env (check-config warns)
  // Failed AUTHs (and HELLO ... AUTH) one connection may make; the last is answered
  // WRONGPASS with the close said, and the connection closes (Redis closes a client that
  // pipelines many).
  std::int64_t max_auth_failures = 10;
  // Each peer address (an IPv6 one by its /64) may fail AUTH auth_failure_burst times at
  // once, then auth_failure_rate times a second, on all its connections together; over
  // that, its AUTHs are refused without the password being looked at. The engine keeps the
  // count (an inline GCRA, local to this instance).
  std::int64_t auth_failure_burst = 100;
  core::Rate auth_failure_rate{10, core::kNanosPerSecond};
  // That count as the engine's inline limit: "gcra:rate=10/s,burst=99" (GCRA's burst + 1
  // pass at once).
  std::string auth_failure_limit() const {
    return "gcra:rate=" + core::format_rate(auth_failure_rate) +
           ",burst=" + std::to_string(auth_failure_burst - 1);
  }
  // MULTI: what one transaction may queue. The command that does not fit is answered
  // -OOM and EXEC then answers EXECABORT, as Redis answers a queue over maxmemory. Bytes are
  // the queued commands' argument bytes.
  std::int64_t max_queued_commands = 10000;
  std::size_t max_queued_bytes = 16u << 20;
  int line = 0;
};

// `rls:` — the Envoy rate limit service's domains and where their limits keep their state.
struct RlsSettings {
  Storage storage = Storage::kLocal;  // every limit of every domain
  // Failure policy and leasing of the limits kept in Redis; unset fields: redis.* defaults.
  std::optional<FailurePolicy> on_failure;
  std::optional<double> local_share;
  std::optional<std::int64_t> lease;
  std::optional<core::Nanos> lease_ttl;
  // Memory budget of each limit's key table (mapped once, touched as keys arrive). A limit
  // reached only through entries with fixed values has one key and takes one page instead.
  std::size_t memory = 16u << 20;
  // Descriptors one ShouldRateLimit may carry; a request with more is refused, charging
  // nothing. Follows reloads.
  std::int64_t max_descriptors = 10000;
  // HTTP/2 streams one client connection may have open (SETTINGS_MAX_CONCURRENT_STREAMS), held
  // (at no fewer than 100) before the client acknowledges it too; 10x as many resets a second
  // close the connection. Read when the listener starts.
  std::int64_t max_concurrent_streams = 100;
  std::vector<std::string> files;  // envoyproxy/ratelimit files the config names, as written
  std::vector<RlsDomain> domains;  // its own (file "") and those its files hold
  int line = 0;
};

// `grpc:` — the Envoy rate limit service listener (`serve --grpc` overrides).
struct GrpcSettings {
  std::optional<Endpoint> listen;
  int line = 0;
};

struct Timeouts {
  core::Nanos connect = 2 * core::kNanosPerSecond;
  core::Nanos header = 10 * core::kNanosPerSecond;    // client request head
  core::Nanos idle = 60 * core::kNanosPerSecond;      // keep-alive between requests
  core::Nanos upstream = 30 * core::kNanosPerSecond;  // upstream response head
  core::Nanos body = 60 * core::kNanosPerSecond;      // client request body: the longest pause
};

// `http: {body_buffer, max_buffered_body, body_temp_dir, max_body_size, min_body_rate}`: how the
// gateway reads request bodies (docs/configuration.md, `http`).
struct BodyLimits {
  std::size_t buffer = 64u << 10;  // the part of a buffered body held in memory
  std::size_t max_size = 0;        // larger ones get 413; 0: no limit
  std::size_t min_rate = 1024;     // bytes per second a body must average; 0: no minimum
  // Buffered before forwarding (past `buffer`, in a temporary file); a longer body streams
  // after it; 0: every body streams.
  std::size_t max_buffered = 16u << 20;
  std::string temp_dir;  // where the temporary files go; "": the system's ($TMPDIR, else /tmp)
  friend bool operator==(const BodyLimits&, const BodyLimits&) = default;
};

// `admin_auth:` the bearer token the admin listener requires (docs/admin-api.md, "Access"),
// named here and read by the admin server at start-up and on each reload: from a file, or from
// an environment variable. Neither: no token.
struct AdminAuth {
  std::string token_file;
  std::string token_env;
  bool insecure = false;  // serve a non-loopback admin listener without a token
  int line = 0;
  friend bool operator==(const AdminAuth& a, const AdminAuth& b) {
    return a.token_file == b.token_file && a.token_env == b.token_env && a.insecure == b.insecure;
  }
};

struct RuleSet {
  std::optional<Endpoint> listen;  // the gateway; none: no gateway
  // The admin listener; none with `admin: off` (reloads still follow SIGHUP and the file).
  std::optional<Endpoint> admin = Endpoint{"127.0.0.1", 9090};
  std::optional<Endpoint> check;  // the decision API alone (/v1/check...); none: no listener
  bool check_on_admin = true;     // the admin listener serves /v1/check... too
  AdminAuth admin_auth;
  // Host names the admin listener answers to, besides its own address (DNS rebinding).
  std::vector<std::string> admin_hosts;
  int workers = 0;  // event loops; 0: one per core
  std::vector<Cidr> trusted_proxies;
  std::size_t memory = 64u << 20;  // table budget per limit (bytes)
  Timeouts timeouts;
  bool ratelimit_headers = true;  // RateLimit-Policy / RateLimit (IETF draft)
  bool legacy_headers = false;    // X-RateLimit-Limit/Remaining/Reset
  // `headers.draft`: the draft whose RateLimit syntax is written (r/t or a/w).
  proto::http::RateLimitDraft ratelimit_draft = proto::http::RateLimitDraft::k12;
  // `http: {escaped_slashes}`: how the gateway normalizes "%2F" before routes see a path.
  proto::http::EscapedSlashes escaped_slashes = proto::http::EscapedSlashes::kDecode;
  BodyLimits bodies;
  std::string access_log;  // "": off; "stdout", or a file path (`access_log.path`)
  AccessLogFormat access_log_format = AccessLogFormat::kText;  // `access_log.format`
  bool write_back = true;  // admin API changes rewrite the config file
  std::optional<RedisSettings> redis;
  std::optional<RespSettings> resp;
  std::optional<GrpcSettings> grpc;
  std::optional<RlsSettings> rls;
  std::vector<Upstream> upstreams;
  std::vector<Route> routes;
  std::vector<Rule> rules;
  StaleCacheLimits stale_cache;  // `stale_cache:`, for routes with `fallback: stale`

  const Rule* rule(std::string_view name) const;
  // A rule's effective storage and Redis options (its own fields over the defaults).
  Storage storage_of(const Rule& rule) const;
  RedisRuleOptions redis_options_of(const Rule& rule) const;
  // The RLS limits' and overrides' options in Redis: `rls:`'s fields, then `redis:`'s defaults.
  RedisRuleOptions rls_redis_options() const;
  // CL.THROTTLE's in Redis: `resp:`'s on_failure and local_share, then `redis:`'s defaults.
  RedisRuleOptions resp_redis_options() const;
  const Upstream* upstream(std::string_view name) const;
};

}  // namespace sluice::config
