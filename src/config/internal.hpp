// What the config reader, checks and writer (config_loader.hpp, split by stage) share: the names
// of the enumerations, and the error list with the line each entry's fields were written on.
#pragma once

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/config/loader.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/core/utf8.hpp"
#include "sluice/proto/http/ip_address.hpp"

namespace sluice::config::internal {

// Names of the enumerations, shared by reading (with the accepted list in errors) and writing.

template <class E>
struct Named {
  std::string_view name;
  E value;
};

inline constexpr Named<Action> kActions[] = {
    {"reject", Action::kReject}, {"delay", Action::kDelay}, {"dry-run", Action::kDryRun}};
inline constexpr Named<OnMissingKey> kOnMissingKey[] = {{"skip", OnMissingKey::kSkip},
                                                        {"deny", OnMissingKey::kDeny}};
inline constexpr Named<OnChange> kOnChanges[] = {{"keep", OnChange::kKeep},
                                                 {"reset", OnChange::kReset},
                                                 {"proportional", OnChange::kProportional}};
inline constexpr Named<LogKey> kLogKeys[] = {{"raw", LogKey::kRaw}, {"hash", LogKey::kHash}};
inline constexpr Named<AccessLogFormat> kAccessLogFormats[] = {{"text", AccessLogFormat::kText},
                                                               {"json", AccessLogFormat::kJson}};
inline constexpr Named<Combine> kCombines[] = {{"all", Combine::kAll}, {"first", Combine::kFirst}};
// A route's request_buffering, spelt as nginx's proxy_request_buffering.
inline constexpr Named<AdaptiveAlgorithm> kAdaptiveAlgorithms[] = {
    {"envoy-gradient", AdaptiveAlgorithm::kEnvoyGradient},
    {"vegas", AdaptiveAlgorithm::kVegas},
    {"gradient2", AdaptiveAlgorithm::kGradient2},
    {"aimd", AdaptiveAlgorithm::kAimd}};
inline constexpr Named<bool> kRequestBuffering[] = {{"on", true}, {"off", false}};
inline constexpr Named<Storage> kStorages[] = {{"local", Storage::kLocal},
                                               {"redis", Storage::kRedis}};
inline constexpr Named<FailurePolicy> kFailurePolicies[] = {{"fail-open", FailurePolicy::kOpen},
                                                            {"fail-closed", FailurePolicy::kClosed},
                                                            {"local", FailurePolicy::kLocal}};

inline constexpr Named<proto::http::EscapedSlashes> kEscapedSlashes[] = {
    {"decode", proto::http::EscapedSlashes::kDecode},
    {"reject", proto::http::EscapedSlashes::kReject},
    {"keep", proto::http::EscapedSlashes::kKeep}};

// `headers.draft`. -09 and -10 wrote what -11 writes (r and t), so their clients take "11".
inline constexpr Named<proto::http::RateLimitDraft> kRateLimitDrafts[] = {
    {"11", proto::http::RateLimitDraft::k11}, {"12", proto::http::RateLimitDraft::k12}};

template <class E, std::size_t N>
std::string_view name_of(const Named<E> (&table)[N], E value) {
  for (const auto& n : table) {
    if (n.value == value) return n.name;
  }
  return "?";
}

// Input echoed in a message: bytes that are not UTF-8, and control characters, shown as \xHH so
// the message (on stderr, in a JSON reply) is valid text that still says what was written.
inline std::string quoted(std::string_view s) { return "'" + core::printable(s) + "'"; }

inline bool is_tchar(char c) {  // RFC 9110 token characters: header and cookie names, methods
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

inline bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

// An IP address in `family`'s text form into `out` (16 bytes: room for IPv6).
template <std::size_t N>
bool parse_ip(int family, std::string_view text, unsigned char (&out)[N]) {
  static_assert(N >= 16);
  return proto::http::parse_ip(family, text, out);
}

// A host as written before an endpoint's port: a name or an IPv4 address (endpoints bracket
// IPv6 themselves). Returns the problem, or nothing (addresses.cpp).
std::optional<std::string> host_problem(std::string_view host);

// A field path as errors show it: "servers.1" is the field "servers" (the line says which item).
std::string shown_field(std::string_view path);

// "header:X-Api-Key", as written in a rule's key (config_reader.cpp, beside the parser).
// A key part from its text ("client_ip/24", "header:X-Api-Key"), or why it is not one; and
// back (key_part.cpp).
core::Expected<KeyPart> parse_key_part(std::string_view text);
std::string format_key_part(const KeyPart& part);

// ---------------------------------------------------------------------------------------------
// Errors, and where each entry's fields were written.

class Errors {
 public:
  void add(int line, std::string message) { list_.push_back({"", line, std::move(message)}); }
  bool empty() const { return list_.empty(); }
  std::size_t size() const { return list_.size(); }
  std::vector<ConfigError> located(const std::string& file) && {
    std::stable_sort(list_.begin(), list_.end(),
                     [](const ConfigError& a, const ConfigError& b) { return a.line < b.line; });
    for (auto& e : list_) e.file = file;
    return std::move(list_);
  }
  std::string joined() const {
    std::string out;
    for (const auto& e : list_) out += (out.empty() ? "" : "; ") + e.message;
    return out;
  }

 private:
  std::vector<ConfigError> list_;
};

// Where one entry (the top level, an upstream, a route, a rule) and its fields were written,
// and which fields were already reported as unreadable, so the checks neither repeat an error
// nor judge a default that stands in for a broken value. Paths are dotted: "match.path_exact",
// "rules.2" (the third item of a list).
struct Origin {
  int line = 0;
  std::map<std::string, int, std::less<>> fields;
  std::set<std::string, std::less<>> bad;

  // The line of `path`, else of its closest written parent, else of the entry.
  int at(std::string_view path) const {
    while (true) {
      if (auto it = fields.find(path); it != fields.end()) return it->second;
      const auto dot = path.rfind('.');
      if (dot == std::string_view::npos) return line;
      path = path.substr(0, dot);
    }
  }
  bool written(std::string_view path) const { return fields.contains(path); }
  bool ok(std::string_view path) const { return !bad.contains(path); }
  void mark_bad(std::string_view path) {
    while (true) {
      bad.emplace(path);
      const auto dot = path.rfind('.');
      if (dot == std::string_view::npos) return;
      path = path.substr(0, dot);
    }
  }
};

// Parallel to RuleSet's vectors; `top` holds the top-level fields ("listen").
struct Origins {
  Origin top;
  std::vector<Origin> upstreams, routes, rules;

  static Origins of(const RuleSet& rs) {  // a set without a file: only the entries' own lines
    Origins o;
    auto lines = [](const auto& entries, std::vector<Origin>& out) {
      for (const auto& e : entries) out.push_back(Origin{e.line, {}, {}});
    };
    lines(rs.upstreams, o.upstreams);
    lines(rs.routes, o.routes);
    lines(rs.rules, o.rules);
    return o;
  }
};

// The checks on the model (config_checks.cpp), run by loading after reading and by validate().
void check_rule(const Rule& r, const Origin& o, Errors& errors);
// A rule's tiers and overrides (tier_reader.cpp): each with its tier, of the rule's algorithm.
void check_limit_variants(const Rule& r, const Origin& o, Errors& errors);
void check_all(const RuleSet& rs, const Origins& o, Errors& errors);
// The `redis:` section's combinations: one way to name Redis, the db a cluster allows, AUTH
// with a password, the TLS files that go together (redis_checks.cpp).
void check_redis_store(const RedisSettings& r, const Origin& top, Errors& errors);

}  // namespace sluice::config::internal
