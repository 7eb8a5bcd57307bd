// Reading the main YAML config into a RuleSet (readers.hpp): each value into the model, errors
// at their lines, and an Origin per entry so the checks that follow can place theirs too.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>

#include "breaker_yaml.hpp"
#include "internal.hpp"
#include "readers.hpp"
#include "section.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/core/byte_size.hpp"
#include "sluice/core/rate.hpp"
#include "sluice/core/time.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::config {

using internal::check_all;
using internal::check_rule;
using internal::describe;
using internal::Entry;
using internal::Errors;
using internal::host_problem;
using internal::is_token;
using internal::Item;
using internal::join;
using internal::kAccessLogFormats;
using internal::kActions;
using internal::kCombines;
using internal::kEscapedSlashes;
using internal::kFailurePolicies;
using internal::kLogKeys;
using internal::kOnMissingKey;
using internal::kRateLimitDrafts;
using internal::kRequestBuffering;
using internal::kStorages;
using internal::line_of;
using internal::Named;
using internal::Origin;
using internal::Origins;
using internal::parse_env_name;
using internal::parse_ip;
using internal::parse_key_part;
using internal::parse_share;
using internal::quoted;
using internal::read_redis_options;
using internal::read_secret;
using internal::RedisOptionFields;
using internal::Section;
using internal::shown_field;

namespace {

using core::Nanos;

Rule read_rule(const std::string& name, const yaml::Node& node, int line, Errors& errors,
               Origin& origin, bool name_field) {
  Rule r;
  r.name = name;
  r.line = line;
  origin.line = line;
  std::initializer_list<std::string_view> with_name = {
      "name",       "limit",          "key",
      "action",     "max_wait",       "status",
      "body",       "on_missing_key", "missing_key_status",
      "permit_ttl", "max_permits",    "storage",
      "on_failure", "local_share",    "lease",
      "lease_ttl",  "log_key",        "on_deny",
      "tier",       "tiers",          "overrides",
      "on_change",  "count_denied",   "cost_from",
      "reserve",    "count_if"};
  std::initializer_list<std::string_view> without_name = {
      "limit",       "key",          "action",         "max_wait",
      "status",      "body",         "on_missing_key", "missing_key_status",
      "permit_ttl",  "max_permits",  "storage",        "on_failure",
      "local_share", "lease",        "lease_ttl",      "log_key",
      "on_deny",     "tier",         "tiers",          "overrides",
      "on_change",   "count_denied", "cost_from",      "reserve",
      "count_if"};
  Section s(node, "rule " + quoted(name) + ": ", "", errors, origin,
            name_field ? with_name : without_name);
  if (auto given = s.text("name"); given && *given != name) {
    s.fail("name",
           quoted(*given) + " differs from the name the rule is stored under, " + quoted(name));
  }
  if (auto text = s.text("limit")) {
    auto spec = spec::parse_limit_spec(*text);
    if (spec) {
      r.limit_text = *text;
      r.limit = *spec;
    } else {
      s.fail("limit", spec.error());
    }
  }
  r.key = s.parsed_list<KeyPart>("key", parse_key_part, true);
  r.tier = s.parsed<KeyPart>("tier", parse_key_part);
  internal::read_limit_variants(s, r, origin);
  if (auto a = s.choice("action", kActions)) r.action = *a;
  if (auto w = s.duration("max_wait")) r.max_wait = *w;
  if (auto st = s.number("status", 0, 999)) r.status = static_cast<int>(*st);
  if (auto b = s.text("body")) r.body = *b;
  if (auto m = s.choice("on_missing_key", kOnMissingKey)) r.on_missing_key = *m;
  if (auto st = s.number("missing_key_status", 0, 999)) {
    r.missing_key_status = static_cast<int>(*st);
  }
  if (auto k = s.choice("log_key", kLogKeys)) r.log_key = *k;
  if (auto t = s.duration("permit_ttl")) r.permit_ttl = *t;
  if (auto n = s.number("max_permits", 1, 100'000'000)) r.max_permits = *n;
  if (auto d = s.section("on_deny", {"block"})) {
    r.block = d->duration("block");
    if (!r.block && !d->has("block")) d->fail("block", "on_deny needs block (e.g. block: 10m)");
  }
  if (auto c = s.flag("count_denied")) r.count_denied = *c;
  internal::read_cost(s, r);
  r.storage = s.choice("storage", kStorages);
  const RedisOptionFields o = read_redis_options(s);
  r.on_failure = o.on_failure;
  r.local_share = o.local_share;
  r.lease = o.lease;
  r.lease_ttl = o.lease_ttl;
  return r;
}

std::optional<std::string> path_problem(std::string_view path) {
  if (!path.starts_with('/')) return "must start with '/', got " + quoted(path);
  if (path.find_first_of(" \t\r\n?#") != std::string_view::npos) {
    return quoted(path) + " must be a plain path (no spaces, query '?' or fragment '#')";
  }
  // Requests are matched after normalization, so a path in another spelling would never match.
  std::string scratch;
  proto::http::TargetParts parts;
  const auto e =
      proto::http::normalize_target(path, proto::http::EscapedSlashes::kKeep, scratch, parts);
  if (e != proto::http::TargetError::kNone) {
    return quoted(path) + " cannot be normalized: " + std::string(proto::http::describe(e));
  }
  if (parts.path != path) {
    return quoted(path) + " is matched after normalization: write " + quoted(parts.path);
  }
  return std::nullopt;
}

Route read_route(const yaml::Node& node, std::size_t index, Errors& errors, Origin& origin) {
  Route r;
  r.line = origin.line = line_of(node);
  if (auto name = node.find("name"); name && name->is_scalar()) r.name = name->scalar();
  const std::string prefix = r.name.empty() ? "route #" + std::to_string(index + 1) + ": "
                                            : "route " + quoted(r.name) + ": ";
  Section s(node, prefix, "", errors, origin,
            {"name", "match", "upstream", "respond", "rules", "combine", "request_buffering",
             "breaker", "adaptive_concurrency"});
  s.text("name");
  if (auto m = s.section("match", {"host", "path_prefix", "path_exact", "methods"})) {
    if (auto host = m->text("host")) {
      unsigned char buf[16];
      const bool v6 = host->size() > 2 && host->front() == '[' && host->back() == ']' &&
                      parse_ip(AF_INET6, std::string_view(*host).substr(1, host->size() - 2), buf);
      if (auto p = v6 ? std::nullopt : host_problem(*host)) {
        m->fail("host", *p + "; the host is matched exactly, without a port");
      } else {
        r.match.host = *host;
      }
    }
    for (auto [field, out] : {std::pair{"path_prefix", &r.match.path_prefix},
                              std::pair{"path_exact", &r.match.path_exact}}) {
      if (auto path = m->text(field)) {
        if (auto p = path_problem(*path)) {
          m->fail(field, *p);
        } else {
          *out = *path;
        }
      }
    }
    if (auto methods = m->list("methods")) {
      for (const auto& item : *methods) {
        const bool upper = std::none_of(item.text.begin(), item.text.end(), [](char c) {
          return std::islower(static_cast<unsigned char>(c)) != 0;
        });
        if (!is_token(item.text)) {
          m->fail(item.path, item.line, quoted(item.text) + " is not an HTTP method");
        } else if (!upper) {
          std::string up = item.text;
          for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          m->fail(item.path, item.line,
                  "HTTP methods are case-sensitive: write " + up + ", not " + item.text);
        } else {
          r.match.methods.push_back(item.text);
        }
      }
    }
  }
  if (auto up = s.text("upstream")) r.upstream = *up;
  if (auto respond = s.section("respond", {"status", "body"})) {
    r.respond_status = 200;
    if (auto st = respond->number("status", 0, 999)) r.respond_status = static_cast<int>(*st);
    if (auto body = respond->text("body")) r.respond_body = *body;
  }
  if (auto rules = s.list("rules")) {
    for (const auto& item : *rules) r.rules.push_back(item.text);
  }
  if (auto c = s.choice("combine", kCombines)) r.combine = *c;
  if (auto b = s.choice("request_buffering", kRequestBuffering)) r.request_buffering = *b;
  r.breaker = internal::read_breaker(s, node, !r.respond_status && s.has("upstream"));
  r.adaptive = read_adaptive_concurrency(s);
  return r;
}

Upstream read_upstream(const Entry& e, Errors& errors, Origin& origin) {
  Upstream u;
  u.name = e.name;
  u.line = origin.line = e.line;
  Section s(e.node, "upstream " + quoted(e.name) + ": ", "", errors, origin,
            {"servers", "max_fails", "fail_timeout"});
  u.servers = s.parsed_list<Endpoint>("servers", parse_endpoint);
  if (auto n = s.number("max_fails", 0, 1'000'000)) u.max_fails = static_cast<int>(*n);
  if (auto t = s.duration("fail_timeout")) u.fail_timeout = *t;
  return u;
}

}  // namespace

// An environment variable's name as a shell writes it.
core::Expected<std::string> internal::parse_env_name(const std::string& t) {
  const bool ok = !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])) == 0 &&
                  std::all_of(t.begin(), t.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                  });
  if (!ok) {
    return core::make_error(quoted(t) +
                            " is not an environment variable name (letters, digits and '_')");
  }
  return t;
}

namespace {

// A name the admin listener answers to in Host: a host name or an IP address (IPv6 in
// brackets), without a port, compared without letter case.
core::Expected<std::string> parse_admin_host(const std::string& t) {
  unsigned char buf[16];
  const bool v6 = t.size() > 2 && t.front() == '[' && t.back() == ']' &&
                  parse_ip(AF_INET6, std::string_view(t).substr(1, t.size() - 2), buf);
  if (auto p = v6 ? std::nullopt : host_problem(t)) {
    return core::make_error(*p + "; a Host name is given without a port");
  }
  std::string lower = t;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

void read_admin_access(Section& s, RuleSet& rs) {
  rs.check = s.endpoint("check");
  if (auto on = s.flag("check_on_admin")) rs.check_on_admin = *on;
  if (auto a = s.section("admin_auth", {"token_file", "token_env", "insecure"})) {
    rs.admin_auth.line = s.line("admin_auth");
    if (auto f = a->text("token_file")) rs.admin_auth.token_file = *f;
    if (auto e = a->parsed<std::string>("token_env", parse_env_name)) rs.admin_auth.token_env = *e;
    if (auto i = a->flag("insecure")) rs.admin_auth.insecure = *i;
  }
  rs.admin_hosts = s.parsed_list<std::string>("admin_hosts", parse_admin_host);
}

constexpr std::size_t kMinMemory = 1024;  // well above one table bucket (8 keys)

constexpr std::size_t kMaxSecretFile = 4096;

// resp.max_queued_bytes: room for a few commands at the least, and well under what a 32-bit
// offset or a machine's memory would refuse at the most.
constexpr std::size_t kMinQueuedBytes = 1024;
constexpr std::size_t kMaxQueuedBytes = std::size_t{1} << 30;

}  // namespace

// A secret for AUTH: the first line of a file (a trailing newline dropped), or a variable.
std::optional<std::string> internal::read_secret(Section& r, std::string_view file_field,
                                                 const std::string& file,
                                                 std::string_view env_field,
                                                 const std::string& env) {
  if (!file.empty() && !env.empty()) {
    r.fail(env_field,
           "give " + std::string(file_field) + " or " + std::string(env_field) + ", not both");
    return std::nullopt;
  }
  if (!file.empty()) {
    // The config's own reader: a FIFO or a device named here would otherwise block a reload
    // on the config thread for good.
    auto text = read_config_file(file, kMaxSecretFile, "a password file");
    if (!text) {
      r.fail(file_field, "cannot read " + quoted(file) + ": " + text.error());
      return std::nullopt;
    }
    std::string secret = std::move(text).value();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    if (secret.empty() || secret.size() > 1024) {
      r.fail(file_field, quoted(file) + " must hold a password of 1 to 1024 bytes");
      return std::nullopt;
    }
    return secret;
  }
  if (!env.empty()) {
    const char* v = std::getenv(env.c_str());
    if (v == nullptr || *v == 0) {
      r.fail(env_field, "the environment variable " + quoted(env) + " is not set (or empty)");
      return std::nullopt;
    }
    return std::string(v);
  }
  return std::string();
}

namespace {

// What one client may cost: failed AUTHs, a transaction's queue.
void read_resp_limits(Section& r, RespSettings& resp) {
  if (auto m = r.number("max_auth_failures", 1, 1000000)) resp.max_auth_failures = *m;
  if (auto b = r.number("auth_failure_burst", 1, 1000000)) resp.auth_failure_burst = *b;
  if (auto rate = r.parsed<core::Rate>("auth_failure_rate", core::parse_rate)) {
    resp.auth_failure_rate = *rate;
    if (auto spec = spec::parse_limit_spec(resp.auth_failure_limit()); !spec) {
      r.fail("auth_failure_rate", spec.error());
    }
  }
  if (auto m = r.number("max_queued_commands", 1, 1000000)) resp.max_queued_commands = *m;
  if (auto bytes = r.parsed<std::size_t>("max_queued_bytes", core::parse_bytes)) {
    if (*bytes < kMinQueuedBytes || *bytes > kMaxQueuedBytes) {
      r.fail("max_queued_bytes", core::format_bytes(*bytes) +
                                     " is out of range (accepted: 1KiB to 1GiB; the default is "
                                     "16MiB)");
    } else {
      resp.max_queued_bytes = *bytes;
    }
  }
}

std::optional<RespSettings> read_resp(Section& s) {
  auto r = s.section(
      "resp", {"listen", "storage", "on_failure", "local_share", "memory", "max_clients", "user",
               "password_file", "password_env", "max_auth_failures", "auth_failure_burst",
               "auth_failure_rate", "max_queued_commands", "max_queued_bytes"});
  if (!r) return std::nullopt;
  RespSettings resp;
  resp.line = s.line("resp");
  resp.listen = r->endpoint("listen");
  if (auto st = r->choice("storage", kStorages)) resp.storage = *st;
  resp.on_failure = r->choice("on_failure", kFailurePolicies);
  resp.local_share = r->parsed<double>("local_share", parse_share);
  if (auto memory = r->parsed<std::size_t>("memory", core::parse_bytes)) {
    if (*memory < kMinMemory) {
      r->fail("memory", "at least 1KiB is needed (one table bucket); the default is 64MiB");
    } else {
      resp.memory = *memory;
    }
  }
  if (auto m = r->number("max_clients", 1, 1000000)) resp.max_clients = *m;
  if (auto u = r->text("user")) resp.user = *u;
  if (auto f = r->text("password_file")) resp.password_file = *f;
  if (auto e = r->text("password_env")) resp.password_env = *e;
  if (auto secret =
          read_secret(*r, "password_file", resp.password_file, "password_env", resp.password_env)) {
    resp.password = *secret;
    resp.password_line = r->line(resp.password_file.empty() ? "password_env" : "password_file");
  }
  read_resp_limits(*r, resp);
  return resp;
}

// A byte rate, "1KiB/s"; "0/s" is none.
core::Expected<std::size_t> parse_byte_rate(const std::string& t) {
  if (!t.ends_with("/s")) {
    return core::make_error("expected bytes per second (e.g. 1KiB/s, or 0/s for no minimum), got " +
                            quoted(t));
  }
  return core::parse_bytes(std::string_view(t).substr(0, t.size() - 2));
}

// The memory part of a buffered body, one per connection reading one.
constexpr std::size_t kMaxBodyBuffer = std::size_t{64} << 20;

// A directory for the bodies' temporary files: absolute, so that it does not depend on where
// sluice was started.
core::Expected<std::string> parse_temp_dir(const std::string& t) {
  if (t.empty() || t.front() != '/') {
    return core::make_error("expected an absolute directory (e.g. /var/cache/sluice), got " +
                            quoted(t) + "; leave it out for the system's temporary directory");
  }
  return t;
}

void read_body_limits(Section& h, BodyLimits& out) {
  if (h.has("buffer_bodies")) {
    h.fail("buffer_bodies",
           "renamed body_buffer: the part of a body held in memory (a longer body goes on to a "
           "temporary file, up to max_buffered_body); to stream bodies, set request_buffering: "
           "off on the route, or max_buffered_body: 0");
  }
  if (auto b = h.parsed<std::size_t>("body_buffer", core::parse_bytes)) {
    if (*b > kMaxBodyBuffer) {
      h.fail("body_buffer",
             "at most 64MiB (each connection reading a body may hold this much in memory); "
             "the rest of a longer body goes to a temporary file");
    } else {
      out.buffer = *b;
    }
  }
  if (auto m = h.parsed<std::size_t>("max_buffered_body", core::parse_bytes)) {
    out.max_buffered = *m;
  }
  if (auto d = h.parsed<std::string>("body_temp_dir", parse_temp_dir)) out.temp_dir = *d;
  if (auto m = h.parsed<std::size_t>("max_body_size", core::parse_bytes)) out.max_size = *m;
  if (auto r = h.parsed<std::size_t>("min_body_rate", parse_byte_rate)) out.min_rate = *r;
}

// `access_log: FILE` (or stdout), or `access_log: {path: FILE, format: text|json}`.
void read_access_log(Section& s, RuleSet& rs) {
  if (!s.has("access_log")) return;
  if (!s.is_map("access_log")) {
    if (auto log = s.text("access_log")) rs.access_log = *log;
    return;
  }
  auto a = s.section("access_log", {"path", "format"});
  if (!a) return;
  if (auto f = a->choice("format", kAccessLogFormats)) rs.access_log_format = *f;
  if (auto path = a->text("path")) {
    if (path->empty()) {
      a->fail("path", "is empty (stdout, or a file path; remove access_log to turn it off)");
    } else {
      rs.access_log = *path;
    }
  } else if (!a->has("path")) {
    s.fail("access_log",
           "needs a path (stdout, or a file path), e.g. {path: stdout, format: json}");
  }
}

}  // namespace

RuleSet internal::read_config(const yaml::Node& root, Errors& errors, Origins& origins) {
  RuleSet rs;
  Section s(root, "", "", errors, origins.top,
            {"listen",   "admin",          "workers",    "trusted_proxies", "memory",
             "timeouts", "headers",        "http",       "access_log",      "write_back",
             "check",    "check_on_admin", "admin_auth", "admin_hosts",     "redis",
             "resp",     "grpc",           "rls",        "upstreams",       "routes",
             "rules",    "stale_cache"});
  rs.listen = s.endpoint("listen");
  if (s.text_is("admin", "off")) {
    rs.admin.reset();
  } else if (auto admin = s.endpoint("admin")) {
    rs.admin = *admin;
  }
  read_admin_access(s, rs);
  if (auto w = s.number("workers", 0, 1024)) rs.workers = static_cast<int>(*w);
  rs.trusted_proxies = s.parsed_list<Cidr>("trusted_proxies", parse_cidr);
  if (auto memory = s.parsed<std::size_t>("memory", core::parse_bytes)) {
    if (*memory < kMinMemory) {
      s.fail("memory", "at least 1KiB is needed (one table bucket); the default is 64MiB");
    } else {
      rs.memory = *memory;
    }
  }
  if (auto t = s.section("timeouts", {"connect", "header", "idle", "upstream", "body"})) {
    for (auto [field, out] :
         {std::pair{"connect", &rs.timeouts.connect}, std::pair{"header", &rs.timeouts.header},
          std::pair{"idle", &rs.timeouts.idle}, std::pair{"upstream", &rs.timeouts.upstream},
          std::pair{"body", &rs.timeouts.body}}) {
      if (auto d = t->duration(field)) *out = *d;
    }
  }
  if (auto h = s.section("headers", {"ratelimit", "legacy", "draft"})) {
    if (auto on = h->flag("ratelimit")) rs.ratelimit_headers = *on;
    if (auto on = h->flag("legacy")) rs.legacy_headers = *on;
    // -09 and -10 write what -11 writes: say so rather than only "unknown".
    if (auto t = h->text("draft"); t && (*t == "9" || *t == "09" || *t == "10")) {
      h->fail("draft", "draft " + *t +
                           " is not offered: its fields are draft 11's (r and t), so "
                           "write 11 (accepted: 11, 12)");
    } else if (auto d = h->choice("draft", kRateLimitDrafts)) {
      rs.ratelimit_draft = *d;
    }
  }
  if (auto h =
          s.section("http", {"escaped_slashes", "body_buffer", "max_buffered_body", "body_temp_dir",
                             "max_body_size", "min_body_rate", "buffer_bodies"})) {
    if (auto e = h->choice("escaped_slashes", kEscapedSlashes)) rs.escaped_slashes = *e;
    read_body_limits(*h, rs.bodies);
  }
  read_access_log(s, rs);
  internal::read_stale_cache(s, rs.stale_cache);
  if (auto wb = s.flag("write_back")) rs.write_back = *wb;
  rs.redis = internal::read_redis(s);

  rs.resp = read_resp(s);
  rs.rls = internal::read_rls(s, errors);
  if (auto g = s.section("grpc", {"listen"})) {
    GrpcSettings grpc;
    grpc.line = s.line("grpc");
    grpc.listen = g->endpoint("listen");
    rs.grpc = grpc;
  }
  for (const Entry& e : s.entries("upstreams", "upstream")) {
    origins.upstreams.emplace_back();
    rs.upstreams.push_back(read_upstream(e, errors, origins.upstreams.back()));
  }
  const auto routes = s.sequence("routes");
  for (std::size_t i = 0; i < routes.size(); ++i) {
    origins.routes.emplace_back();
    rs.routes.push_back(read_route(routes[i], i, errors, origins.routes.back()));
  }
  for (const Entry& e : s.entries("rules", "rule")) {
    origins.rules.emplace_back();
    rs.rules.push_back(read_rule(e.name, e.node, e.line, errors, origins.rules.back(), false));
  }
  return rs;
}

// ---------------------------------------------------------------------------------------------

std::string ConfigError::format() const {
  return file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + message;
}

std::optional<std::string> rule_body_name(std::string_view yaml_or_json) {
  try {
    const yaml::Tree tree = yaml::parse(yaml_or_json, yaml::Limits{});
    const yaml::Node doc = tree.root();
    if (!doc.is_map() || !doc.find("limit") || doc.find("rules") || doc.find("routes")) {
      return std::nullopt;
    }
    const auto name = doc.find("name");
    return name && name->is_scalar() ? std::string(name->scalar()) : std::string();
  } catch (const yaml::ParseError&) {
    return std::nullopt;  // not YAML at all: the config reader says where and why
  }
}

std::string ParsedRule::error() const {
  std::string out;
  for (const auto& p : problems) out += (out.empty() ? "" : "; ") + p;
  return out;
}

ParsedRule parse_rule(const std::string& name, std::string_view yaml_or_json) {
  Errors errors;
  Origin origin;
  ParsedRule out;
  try {
    const yaml::Tree tree = yaml::parse(yaml_or_json, yaml::Limits{});
    Rule rule = read_rule(name, tree.root(), 0, errors, origin, true);
    check_rule(rule, origin, errors);
    if (errors.empty()) out.rule = std::move(rule);
  } catch (const yaml::ParseError& e) {
    out.problems.push_back("rule " + quoted(name) + ": not valid YAML or JSON (line " +
                           std::to_string(e.line()) + "): " + e.what());
    return out;
  }
  for (auto& e : std::move(errors).located("")) out.problems.push_back(std::move(e.message));
  return out;
}

}  // namespace sluice::config
