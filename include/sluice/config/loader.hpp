// The YAML configuration (docs/configuration.md) in and out: a file becomes a validated RuleSet
// or every error with its line; single rules come from the admin API; write-back emits YAML.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/config/rule_set.hpp"
#include "sluice/core/expected.hpp"

namespace sluice::config {

struct ConfigError {
  std::string file;
  int line = 0;  // 1-based; 0 when the value has no source line (made through the admin API)
  std::string message;
  std::string format() const;  // "file:line: message", or "file: message" without a line
};

struct Loaded {
  std::optional<RuleSet> rules;     // set iff errors is empty
  std::vector<ConfigError> errors;  // every error found, in line order
};

// The largest config file sluice reads (`--max-config-size`), RLS files included. A cap, not a
// budget: the parsed tree of a file this size takes a few times its size
// (docs/configuration.md has the figures).
inline constexpr std::size_t kDefaultMaxConfigSize = 16u << 20;

// Reads a regular file of at most `max_size` bytes, checked while reading (at most max_size + 1
// bytes are ever read). A FIFO, a device or a directory is refused, so a reload can neither
// block on a pipe nor read /dev/zero until memory runs out. The error has no file name:
// "is larger than the config size limit of 16MiB (--max-config-size); ...". `what` names
// another kind of file read the same way ("a token file"), whose cap is not the flag's.
core::Expected<std::string> read_config_file(const std::string& path, std::size_t max_size,
                                             std::string_view what = {});
// "16MiB (--max-config-size)": the cap as messages name it.
std::string size_limit_text(std::size_t max_size);

// Every file is read under `max_size`, which also bounds the text a YAML document's aliases
// may expand to (billion laughs); nesting deeper than 32 levels is refused. Both are errors at
// their line.
//
// `rls_files`: envoyproxy/ratelimit files beyond those the config's `rls.files` names (serve
// --rls-config); their domains join the config's, each error at its own file and line.
Loaded load_config_file(const std::string& path, const std::vector<std::string>& rls_files = {},
                        std::size_t max_size = kDefaultMaxConfigSize);
Loaded load_config_text(std::string_view yaml, const std::string& file_name,
                        const std::vector<std::string>& rls_files = {},
                        std::size_t max_size = kDefaultMaxConfigSize);
// A config of nothing but the RLS domains of these files (serve --grpc without --config).
Loaded load_rls_files(const std::vector<std::string>& paths,
                      std::size_t max_size = kDefaultMaxConfigSize);
// A main config, or an envoyproxy/ratelimit file (one whose document has a `domain`), read as
// what it is (check-config).
Loaded load_any_file(const std::string& path, std::size_t max_size = kDefaultMaxConfigSize);

// One envoyproxy/ratelimit file: one domain, or several as YAML documents separated by `---`.
struct RlsLoaded {
  std::vector<RlsDomain> domains;   // empty when there are errors
  std::vector<ConfigError> errors;  // every error found, in line order
};
RlsLoaded load_rls_text(std::string_view yaml, const std::string& file_name,
                        std::size_t max_size = kDefaultMaxConfigSize);

// A single rule from a YAML or JSON mapping (the admin API's PUT body; JSON is YAML flow syntax,
// so one parser reads both): the rule, or every problem, one each, each naming the field:
// "rule 'per-user': field 'limit': unknown algorithm 'tokn' (accepted: ...)".
struct ParsedRule {
  std::optional<Rule> rule;           // set iff problems is empty
  std::vector<std::string> problems;  // in line order
  explicit operator bool() const { return rule.has_value(); }
  // Read like std::expected: the rule, when there is one.
  const Rule& operator*() const { return *rule; }
  const Rule* operator->() const { return &*rule; }
  // The problems joined with "; " (one message for a caller that shows one).
  std::string error() const;
};
ParsedRule parse_rule(const std::string& name, std::string_view yaml_or_json);

// Checks a whole RuleSet: each rule on its own, routes naming existing upstreams and rules,
// unique names, a gateway with routes. The admin API calls it after editing rules; loading
// runs the same checks.
std::vector<ConfigError> validate(const RuleSet& rules, const std::string& file_name);

// What loads but is unwise, each as "file:line: warning: ..." (check-config prints them and
// still exits 0): a RESP password shorter than kMinPasswordBytes.
std::vector<ConfigError> warnings(const RuleSet& rules, const std::string& file_name);
inline constexpr std::size_t kMinPasswordBytes = 16;

// Names of rules, routes and upstreams (they appear in admin URLs and metric labels): letters,
// digits, '_', '-' and '.'. The problem in words, with the name escaped where it is not text
// ("rule name 'a b' may hold only ..."), or nothing when `name` is fine.
std::optional<std::string> entry_name_problem(std::string_view what, std::string_view name);

// Whether an admin API body is one rule (a mapping with `limit` and no `rules` or `routes`)
// rather than a whole config, and the name it gives itself ("" when it gives none).
std::optional<std::string> rule_body_name(std::string_view yaml_or_json);

// For write-back: loading the text again gives an equal RuleSet (comments are not kept).
std::string to_yaml(const RuleSet& rules);
// A rule as JSON for the admin API: sluice/config/rule_json.hpp.

// The value syntaxes of the config, for flags that override it (`serve --listen`).
// "127.0.0.1:8080", "[::1]:8080", "localhost:8080", ":8080" (all addresses).
core::Expected<Endpoint> parse_endpoint(std::string_view text);
using proto::format_endpoint;
// "10.0.0.0/8", "::1/128", or a bare address (a /32 or /128); host bits must be zero.
using proto::http::parse_cidr;

}  // namespace sluice::config
