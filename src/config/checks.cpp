// The checks on a read RuleSet (config_loader.hpp): combinations, references and names that no
// single value shows wrong, each error placed through the Origin of the field it concerns.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "internal.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/proto/resp/store_url.hpp"

namespace sluice::config {

using internal::Errors;
using internal::kActions;
using internal::name_of;
using internal::Origin;
using internal::Origins;
using internal::quoted;
using internal::shown_field;

namespace {

// Names of rules, routes and upstreams appear in admin URLs and metric labels.
bool is_entry_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
}

constexpr std::string_view kLimitExample = "e.g. limit: token-bucket:rate=10/s,burst=20";

std::string name_problem(std::string_view what, std::string_view name) {
  return what.empty() ? ""
                      : std::string(what) + " name " + quoted(name) +
                            " may hold only letters, digits, '_', '-' and '.' (it "
                            "appears in admin URLs and metric labels)";
}

template <class T>
std::string defined_names(const std::vector<T>& entries, std::string_view what) {
  if (entries.empty()) return "no " + std::string(what) + "s are defined";
  constexpr std::size_t kShown = 20;  // a message, not a listing: a config may hold 100k rules
  std::string out = "defined: ";
  for (std::size_t i = 0; i < entries.size() && i < kShown; ++i) {
    out += (i ? ", " : "") + entries[i].name;
  }
  if (entries.size() > kShown) out += ", ... (" + std::to_string(entries.size()) + " in all)";
  return out;
}

// Rules by name, built once per check: RuleSet::rule() is a linear search, which a route-by-
// route check of a config with many rules would make quadratic.
class RuleIndex {
 public:
  explicit RuleIndex(const RuleSet& rs) {
    by_name_.reserve(rs.rules.size());
    for (const auto& r : rs.rules) by_name_.emplace(r.name, &r);  // the first of a name counts
  }
  const Rule* find(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string_view, const Rule*> by_name_;
};

template <class T>
void check_unique(const std::vector<T>& entries, const std::vector<Origin>& origins,
                  std::string_view what, Errors& errors) {
  std::unordered_map<std::string_view, std::size_t> first_of;
  first_of.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name.empty()) continue;
    const auto [it, fresh] = first_of.emplace(entries[i].name, i);
    if (fresh) continue;
    const int first = origins[it->second].line;
    errors.add(origins[i].line,
               "duplicate " + std::string(what) + " name " + quoted(entries[i].name) +
                   (first > 0 ? " (first at line " + std::to_string(first) + ")" : ""));
  }
}

void check_route(const Route& r, std::size_t index, const RuleSet& rs, const RuleIndex& rules,
                 const Origin& o, Errors& errors) {
  const std::string p = r.name.empty() ? "route #" + std::to_string(index + 1) + ": "
                                       : "route " + quoted(r.name) + ": ";
  auto fail = [&](std::string_view field, const std::string& problem) {
    errors.add(o.at(field), p + "field " + shown_field(field) + ": " + problem);
  };
  if (o.ok("name")) {
    if (r.name.empty()) {
      errors.add(o.line, p + "missing field 'name' (e.g. name: api)");
    } else if (!is_entry_name(r.name)) {
      errors.add(o.at("name"), p + name_problem("route", r.name));
    }
  }
  const bool upstream = !r.upstream.empty() || !o.ok("upstream");
  const bool respond = r.respond_status.has_value() || !o.ok("respond");
  if (upstream && respond) {
    errors.add(std::max(o.at("upstream"), o.at("respond")),
               p + "has both 'upstream' and 'respond'; a route either proxies or answers "
                   "itself: keep one");
  } else if (!upstream && !respond) {
    errors.add(o.line, p + "needs 'upstream' (proxy to it) or 'respond' (answer locally), e.g. "
                           "upstream: app");
  }
  if (!r.upstream.empty() && o.ok("upstream") && rs.upstream(r.upstream) == nullptr) {
    fail("upstream", "no upstream named " + quoted(r.upstream) + " (" +
                         defined_names(rs.upstreams, "upstream") + ")");
  }
  if (respond && o.written("request_buffering")) {
    fail("request_buffering",
         "applies to a route that proxies (upstream); this one answers itself and reads no "
         "body: remove it");
  }
  if (respond && o.written("adaptive_concurrency")) {
    fail("adaptive_concurrency",
         "limits what a route sends its upstream; this one answers itself: remove it");
  }
  if (r.adaptive && !r.adaptive->priority_header.empty() && rs.trusted_proxies.empty()) {
    fail("adaptive_concurrency.priority",
         "header:" + r.adaptive->priority_header +
             " is read only from trusted_proxies, and none is set: add the proxies that set it "
             "to trusted_proxies, or give the route a tier (priority: 0 to 9)");
  }
  if (r.respond_status && o.ok("respond.status") &&
      (*r.respond_status < 200 || *r.respond_status > 599)) {
    fail("respond.status",
         std::to_string(*r.respond_status) + " is out of range (accepted: 200 to 599)");
  }
  if (!r.match.path_prefix.empty() && !r.match.path_exact.empty()) {
    fail("match.path_exact", "path_prefix and path_exact exclude each other; keep one");
  }
  for (std::size_t i = 0; i < r.rules.size(); ++i) {
    const std::string path = "rules." + std::to_string(i);
    if (rules.find(r.rules[i]) == nullptr) {
      fail(path,
           "no rule named " + quoted(r.rules[i]) + " (" + defined_names(rs.rules, "rule") + ")");
    } else if (std::find(r.rules.begin(), r.rules.begin() + static_cast<std::ptrdiff_t>(i),
                         r.rules[i]) != r.rules.begin() + static_cast<std::ptrdiff_t>(i)) {
      fail(path, "rule " + quoted(r.rules[i]) + " is listed twice");
    }
  }
}

void check_upstream(const Upstream& u, const Origin& o, Errors& errors) {
  const std::string p = "upstream " + quoted(u.name) + ": ";
  if (!is_entry_name(u.name)) errors.add(o.line, p + name_problem("upstream", u.name));
  if (o.ok("servers") && u.servers.empty()) {
    errors.add(o.at("servers"),
               p +
                   (o.written("servers") ? "field 'servers': needs at least one server"
                                         : "missing field 'servers'") +
                   " (e.g. servers: [127.0.0.1:8081])");
  }
}

// The decision listener and the admin listener's token (docs/admin-api.md, "Access").
void check_admin_access(const RuleSet& rs, const Origin& top, Errors& errors) {
  if (rs.check && top.ok("check")) {
    const std::string addr = format_endpoint(*rs.check);
    if (rs.check == rs.admin) {
      errors.add(top.at("check"), "field 'check': " + addr +
                                      " is also the admin address; give them different ports "
                                      "(check_on_admin: true serves the decision API there too)");
    } else if (rs.listen && *rs.check == *rs.listen) {
      errors.add(top.at("check"), "field 'check': " + addr +
                                      " is also the gateway address; give them different ports");
    } else if ((rs.resp && rs.resp->listen == rs.check) ||
               (rs.grpc && rs.grpc->listen == rs.check)) {
      errors.add(top.at("check"), "field 'check': " + addr +
                                      " is also a resp or grpc listener; give them different "
                                      "ports");
    }
  }
  const AdminAuth& a = rs.admin_auth;
  if (!a.token_file.empty() && !a.token_env.empty()) {
    errors.add(top.at("admin_auth.token_env"),
               "field 'admin_auth.token_env': give the token in token_file or in token_env, "
               "not both");
  }
  if (top.written("admin_auth.token_file") && top.ok("admin_auth.token_file") &&
      a.token_file.empty()) {
    errors.add(top.at("admin_auth.token_file"),
               "field 'admin_auth.token_file': needs the path of a file holding the token");
  }
}

// Rules kept in Redis: a store to keep them in, options only where they apply, and the
// combinations the Redis backend does not take (docs/distributed.md).
void check_resp(const RuleSet& rs, const Origins& o, Errors& errors) {
  if (!rs.resp) return;
  const RespSettings& r = *rs.resp;
  if (r.storage == Storage::kRedis && o.top.ok("resp.storage") &&
      (!rs.redis || !rs.redis->configured())) {
    errors.add(o.top.at("resp.storage"),
               "field 'resp.storage': CL.THROTTLE kept in Redis, but no store is configured: "
               "add redis: {url: redis://127.0.0.1:6379}");
  }
  if (r.storage != Storage::kRedis) {
    for (std::string_view f : {"resp.on_failure", "resp.local_share"}) {
      if (o.top.written(f)) {
        errors.add(o.top.at(f), "field " + quoted(f) +
                                    ": applies only to storage: redis (CL.THROTTLE kept in Redis)");
      }
    }
  }
  if (o.top.written("resp.user") && r.password_file.empty() && r.password_env.empty()) {
    errors.add(o.top.at("resp.user"),
               "field 'resp.user': AUTH needs a password too: add password_file or password_env");
  }
  if (rs.grpc && rs.grpc->listen && rs.resp->listen && *rs.grpc->listen == *rs.resp->listen) {
    errors.add(o.top.at("grpc.listen"),
               "field 'grpc.listen': " + format_endpoint(*rs.grpc->listen) +
                   " is also resp.listen; give them different ports");
  }
}

void check_rls(const RuleSet& rs, const Origins& o, Errors& errors) {
  if (!rs.rls) return;
  const RlsSettings& r = *rs.rls;
  if (r.storage == Storage::kRedis && o.top.ok("rls.storage") &&
      (!rs.redis || !rs.redis->configured())) {
    errors.add(o.top.at("rls.storage"),
               "field 'rls.storage': RLS limits kept in Redis, but no store is configured: add "
               "redis: {url: redis://127.0.0.1:6379}");
  }
  if (r.storage != Storage::kRedis) {
    for (std::string_view f : {"rls.on_failure", "rls.local_share", "rls.lease", "rls.lease_ttl"}) {
      if (o.top.written(f)) {
        errors.add(o.top.at(f), "field " + quoted(f) +
                                    ": applies only to storage: redis (RLS limits kept in Redis)");
      }
    }
  }
  // Domains from the admin API or the config's own list: one of each name (the loader checks
  // domains from files, naming their files).
  for (std::size_t i = 0; i < r.domains.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (r.domains[i].name == r.domains[j].name && r.domains[i].file.empty() &&
          r.domains[j].file.empty()) {
        errors.add(r.domains[i].line > 0 ? r.domains[i].line : o.top.at("rls.domains"),
                   "domain " + quoted(r.domains[i].name) + " defined twice");
      }
    }
  }
}

// A rule's Redis fields: only on a rule kept there, which needs a store; leasing where it fits.
void check_redis_rule(const RuleSet& rs, const Rule& r, const Origin& ro, Errors& errors) {
  const std::string p = "rule " + quoted(r.name) + ": ";
  auto fail = [&](std::string_view field, const std::string& problem) {
    errors.add(ro.at(field), p + "field " + quoted(field) + ": " + problem);
  };
  if (rs.storage_of(r) != Storage::kRedis) {
    for (std::string_view f : {"on_failure", "local_share", "lease", "lease_ttl"}) {
      if (ro.written(f)) fail(f, "applies only to rules kept in Redis (storage: redis)");
    }
    return;
  }
  if (r.block && rs.redis_options_of(r).lease > 0) {
    fail("on_deny",
         "a leased rule refuses from permits taken ahead, which cannot block the key in Redis; "
         "use lease: 0 (exact) or remove on_deny");
  }
  if ((r.tier || !r.overrides.empty() || !r.shared_overrides.empty()) &&
      r.limit.wait == spec::WaitSupport::kNotTimeBased) {
    fail(r.tier ? "tiers" : "overrides",
         "a concurrency rule kept in Redis has one limit per rule (its permits are given back "
         "by the rule's name); use storage: local for tiers or overrides");
  }
  if (r.count_denied && rs.redis_options_of(r).lease > 0) {
    fail("count_denied",
         "a leased rule refuses from permits taken ahead, which cannot charge Redis for a "
         "refusal; use lease: 0 (exact) or remove count_denied");
  }
  if (r.settles() && rs.redis_options_of(r).lease > 0) {
    fail(r.cost_from.empty() ? "count_if" : "cost_from",
         "a leased rule admits from permits taken ahead and spent here, which a cost settled "
         "after the response cannot follow (a debt in Redis would not stop the permits already "
         "held); use lease: 0 (exact)");
  }
  if (!rs.redis || !rs.redis->configured()) {
    errors.add(ro.written("storage") ? ro.at("storage") : ro.line,
               p + "kept in Redis, but no store is configured: add redis: {url: "
                   "redis://127.0.0.1:6379} (or redis-cluster://HOST:PORT,...)");
  }
  if (r.action == Action::kDryRun && ro.ok("action")) {
    fail("action", "dry-run rules are decided locally only; use storage: local for it");
  }
  const auto opts = rs.redis_options_of(r);
  const auto& a = r.limit.algorithm;
  // Leased permits are spent now or not at all, by one rule alone.
  const auto lease_problem = [&]() -> std::string {
    if (opts.lease == 0 || r.limit_text.empty()) return "";
    if (a != "token-bucket" && a != "gcra" && a != "fixed-window" && a != "sliding-window") {
      return "leasing applies to token-bucket, gcra and the windows, not " + a + " (set lease: 0)";
    }
    if (r.action == Action::kDelay) {
      return "leased permits are spent at once, so a delay rule cannot lease (set lease: 0 "
             "or action: reject)";
    }
    return "";
  }();
  if (!lease_problem.empty()) {
    errors.add(ro.written("lease") ? ro.at("lease") : ro.line,
               p + "field 'lease': " + lease_problem);
  }
}

// What a route may combine: one leasing rule alone in Redis; `combine: first` in one store.
void check_redis_routes(const RuleSet& rs, const RuleIndex& rules, const Origins& o,
                        Errors& errors) {
  for (std::size_t i = 0; i < rs.routes.size(); ++i) {
    const Route& route = rs.routes[i];
    // A request decided against several Redis rules goes to Redis whole; leasing is per rule.
    std::vector<std::string> redis_rules;
    bool leased = false;
    for (const auto& name : route.rules) {
      const Rule* r = rules.find(name);
      if (r == nullptr || rs.storage_of(*r) != Storage::kRedis || r->action == Action::kDryRun) {
        continue;
      }
      redis_rules.push_back(name);
      leased = leased || rs.redis_options_of(*r).lease > 0;
    }
    if (leased && redis_rules.size() > 1) {
      errors.add(o.routes[i].at("rules"), "route " + quoted(route.name) +
                                              ": field 'rules': a leasing rule must be the "
                                              "route's only rule kept in Redis (it has " +
                                              std::to_string(redis_rules.size()) +
                                              "); set lease: 0 or keep the others local");
    }
    if (route.combine != Combine::kFirst) continue;
    for (const auto& name : route.rules) {
      const Rule* r = rules.find(name);
      if (r != nullptr && rs.storage_of(*r) == Storage::kRedis) {
        errors.add(o.routes[i].at("combine"), "route " + quoted(route.name) +
                                                  ": field 'combine': 'first' needs every rule "
                                                  "in one store, and rule " +
                                                  quoted(name) + " is kept in Redis; use all");
        break;
      }
    }
  }
}

void check_redis(const RuleSet& rs, const RuleIndex& rules, const Origins& o, Errors& errors) {
  for (std::size_t i = 0; i < rs.rules.size(); ++i) {
    check_redis_rule(rs, rs.rules[i], o.rules[i], errors);
  }
  check_redis_routes(rs, rules, o, errors);
  if (rs.redis) internal::check_redis_store(*rs.redis, o.top, errors);
}

}  // namespace

std::string internal::shown_field(std::string_view path) {
  const auto dot = path.rfind('.');
  const bool indexed = dot != std::string_view::npos && dot + 1 < path.size() &&
                       path.find_first_not_of("0123456789", dot + 1) == std::string_view::npos;
  return quoted(indexed ? path.substr(0, dot) : path);
}

namespace {

// A rule's errors, each at its field's line and named "rule 'NAME': field 'F': ...". The name
// is formatted only for an error: 10,000 rules are checked on every admin change.
struct RuleErrors {
  const Rule& r;
  const Origin& o;
  Errors& errors;
  std::string prefix() const { return "rule " + quoted(r.name) + ": "; }
  void fail(std::string_view field, const std::string& problem) const {
    errors.add(o.at(field), prefix() + "field " + quoted(field) + ": " + problem);
  }
};

// Its name, limit and key.
void check_rule_basics(const RuleErrors& e, bool limit_ok) {
  const Rule& r = e.r;
  const Origin& o = e.o;
  if (!is_entry_name(r.name)) e.errors.add(o.line, e.prefix() + name_problem("rule", r.name));
  if (o.ok("limit") && r.limit_text.empty()) {
    e.errors.add(o.line, e.prefix() + "missing field 'limit' (" + std::string(kLimitExample) + ")");
  }
  if (limit_ok && r.limit.algorithm == "sliding-log") {
    e.fail("limit",
           "sliding-log keeps a log of every request per key, which a fixed-size table cannot "
           "hold; use sliding-window (same limit and window, bounded memory)");
  }
  if (o.ok("key") && r.key.empty()) {
    e.errors.add(
        o.at("key"),
        e.prefix() +
            (o.written("key") ? "field 'key': needs at least one part" : "missing field 'key'") +
            " (e.g. key: client_ip, or key: const:global for one limit shared by all)");
  }
}

// What it does to a request over the limit: its action, max_wait and statuses.
void check_rule_action(const RuleErrors& e, bool limit_ok) {
  const Rule& r = e.r;
  const Origin& o = e.o;
  const bool action_ok = o.ok("action");
  if (action_ok && r.action == Action::kDelay && limit_ok) {
    if (r.limit.wait == spec::WaitSupport::kNotTimeBased) {
      e.fail("action",
             "a concurrency limit cannot delay: a lease frees when a request ends, not after a "
             "time; use reject or dry-run");
    } else if (r.limit.wait == spec::WaitSupport::kRejectOnly) {
      e.fail("action", r.limit.algorithm +
                           " decides only now and cannot delay a request; use reject or "
                           "dry-run, or a limit that can wait (token-bucket, gcra, "
                           "leaky-bucket, smooth-bursty, smooth-warmup, queue)");
    }
  }
  if (action_ok && o.ok("max_wait")) {
    if (r.action == Action::kDelay && r.max_wait <= 0) {
      e.fail("action",
             "'delay' needs max_wait, the longest a request is held (e.g. max_wait: 500ms)");
    }
    if (r.action != Action::kDelay && (r.max_wait != 0 || o.written("max_wait"))) {
      e.fail("max_wait", "applies only to action 'delay' (this rule's action is '" +
                             std::string(name_of(kActions, r.action)) +
                             "'); remove it or use action: delay");
    }
  }
  if (o.ok("status") && (r.status < 400 || r.status > 599)) {
    e.fail("status", std::to_string(r.status) +
                         " is not an error status (accepted: 400 to 599; the default is 429)");
  }
  if (o.ok("missing_key_status")) {
    if (r.missing_key_status < 400 || r.missing_key_status > 599) {
      e.fail("missing_key_status",
             std::to_string(r.missing_key_status) +
                 " is not an error status (accepted: 400 to 599; the default is 429)");
    } else if (o.written("missing_key_status") && r.on_missing_key != OnMissingKey::kDeny) {
      e.fail("missing_key_status",
             "applies only to on_missing_key: deny (a missing key is skipped otherwise)");
    }
  }
}

// The fields that apply to some algorithms only: permits, blocks, costs settled later.
void check_rule_extras(const RuleErrors& e, bool limit_ok) {
  const Rule& r = e.r;
  const Origin& o = e.o;
  const bool concurrency = limit_ok && r.limit.wait == spec::WaitSupport::kNotTimeBased;
  if (o.ok("max_permits") && o.written("max_permits") && limit_ok && !concurrency) {
    e.fail("max_permits",
           "applies only to a concurrency limit (the most permits the decision service holds "
           "for its callers)");
  }
  if (r.block && o.ok("on_deny") && o.ok("on_deny.block")) {
    if (*r.block <= 0) {
      e.fail("on_deny.block", "must be longer than 0 (e.g. block: 10m)");
    } else if (concurrency) {
      e.fail("on_deny",
             "applies only to rate limits (a concurrency limit refuses only while its "
             "permits are held, so there is nothing to block for)");
    } else if (r.action == Action::kDryRun) {
      e.fail("on_deny", "a dry-run rule never refuses, so it blocks no one; remove on_deny");
    }
  }
  const std::string_view settle_field = r.cost_from.empty() ? "count_if" : "cost_from";
  if (r.settles() && limit_ok && !spec::counts_denials(r.limit)) {
    e.fail(settle_field, "applies to token-bucket, gcra, fixed-window and sliding-window, not " +
                             r.limit.algorithm +
                             " (it queues, delays or holds permits: a cost cannot be settled "
                             "after the fact)");
  }
  if (r.settles() && r.action == Action::kDryRun) {
    e.fail(settle_field, "a dry-run rule charges nothing, so it has nothing to settle; remove it");
  }
  if (r.count_denied && limit_ok && !spec::counts_denials(r.limit)) {
    e.fail("count_denied",
           "applies to token-bucket, gcra, fixed-window and sliding-window, "
           "not " +
               r.limit.algorithm + " (it queues, delays or holds permits: a refusal has no cost)");
  }
  if (o.ok("permit_ttl") && o.written("permit_ttl")) {
    if (limit_ok && !concurrency) {
      e.fail("permit_ttl",
             "applies only to a concurrency limit (how long a permit handed out by "
             "the decision service is kept)");
    } else if (r.permit_ttl <= 0) {
      e.fail("permit_ttl", "must be longer than 0 (the default is 60s)");
    }
  }
}

}  // namespace

void internal::check_rule(const Rule& r, const Origin& o, Errors& errors) {
  const RuleErrors e{r, o, errors};
  const bool limit_ok = o.ok("limit") && !r.limit_text.empty();
  check_rule_basics(e, limit_ok);
  check_rule_action(e, limit_ok);
  check_rule_extras(e, limit_ok);
  check_limit_variants(r, o, errors);
}

void internal::check_all(const RuleSet& rs, const Origins& o, Errors& errors) {
  if (rs.listen && o.top.ok("listen")) {
    if (rs.routes.empty() && o.top.ok("routes")) {
      errors.add(o.top.at("listen"),
                 "field 'listen': the gateway has no routes, so it would answer every request "
                 "404; add routes, or remove listen to serve only the admin API and decision "
                 "service");
    }
    if (rs.listen == rs.admin) {
      errors.add(o.top.at("listen"), "field 'listen': " + format_endpoint(*rs.admin) +
                                         " is also the admin address; give them different ports");
    }
  }
  check_admin_access(rs, o.top, errors);
  const RuleIndex rules(rs);
  check_unique(rs.upstreams, o.upstreams, "upstream", errors);
  check_unique(rs.routes, o.routes, "route", errors);
  check_unique(rs.rules, o.rules, "rule", errors);
  for (std::size_t i = 0; i < rs.upstreams.size(); ++i) {
    check_upstream(rs.upstreams[i], o.upstreams[i], errors);
  }
  for (std::size_t i = 0; i < rs.routes.size(); ++i) {
    check_route(rs.routes[i], i, rs, rules, o.routes[i], errors);
  }
  for (std::size_t i = 0; i < rs.rules.size(); ++i) check_rule(rs.rules[i], o.rules[i], errors);
  check_redis(rs, rules, o, errors);
  check_resp(rs, o, errors);
  check_rls(rs, o, errors);
}

std::optional<std::string> entry_name_problem(std::string_view what, std::string_view name) {
  if (is_entry_name(name)) return std::nullopt;
  if (name.empty()) return "a " + std::string(what) + " name cannot be empty";
  return name_problem(what, name);
}

std::vector<ConfigError> validate(const RuleSet& rules, const std::string& file_name) {
  Errors errors;
  check_all(rules, Origins::of(rules), errors);
  return std::move(errors).located(file_name);
}

std::vector<ConfigError> warnings(const RuleSet& rules, const std::string& file_name) {
  std::vector<ConfigError> out;
  if (rules.resp && !rules.resp->password.empty() &&
      rules.resp->password.size() < kMinPasswordBytes) {
    const RespSettings& r = *rules.resp;
    const std::string field = r.password_file.empty() ? "resp.password_env" : "resp.password_file";
    out.push_back(ConfigError{
        file_name, r.password_line,
        "warning: field " + quoted(field) + ": the password is " +
            std::to_string(r.password.size()) + " bytes; use at least " +
            std::to_string(kMinPasswordBytes) +
            " random bytes (a short one can be guessed, even at resp.auth_failure_rate)"});
  }
  return out;
}

}  // namespace sluice::config
