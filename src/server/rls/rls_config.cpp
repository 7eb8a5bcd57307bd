// Reading envoyproxy/ratelimit's YAML (sluice/server/rls_config.hpp). envoyproxy/ratelimit stops
// at the first problem and names only the file; this reader reports every problem it finds, each
// at its line, and refuses what it would silently read differently (fields it does not know,
// units its fixed windows cannot hold, a (key, value) given twice on one level).
#include "sluice/server/rls_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>

namespace sluice::server {
namespace {

struct UnitRow {
  std::string_view name;
  RlsUnit unit;
  std::string_view window;  // as the limit spec language writes the unit's length
};
constexpr UnitRow kUnits[] = {{"second", RlsUnit::kSecond, "1s"},
                              {"minute", RlsUnit::kMinute, "1m"},
                              {"hour", RlsUnit::kHour, "1h"},
                              {"day", RlsUnit::kDay, "24h"}};

const UnitRow& row_of(RlsUnit unit) {
  for (const auto& r : kUnits) {
    if (r.unit == unit) return r;
  }
  return kUnits[0];
}

// The algorithms that can answer an RLS request: decide at once, keep a fixed-size state.
// The rest delay requests (RLS answers now) or keep a log per key.
constexpr std::string_view kAlgorithms[] = {"fixed-window", "sliding-window", "gcra",
                                            "token-bucket"};

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string joined(std::initializer_list<std::string_view> names) {
  std::string out;
  for (auto n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

int line_of(const YAML::Node& node) { return std::max(node.Mark().line, 0) + 1; }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

class Reader {
 public:
  Reader(std::string file, std::vector<RlsConfigError>& errors)
      : file_(std::move(file)), errors_(errors) {}

  void error(int line, std::string message) {
    errors_.push_back({file_, line, std::move(message)});
  }

  // A document: one domain. Null documents (an empty file, a trailing `---`) hold none.
  std::optional<RlsDomain> domain(const YAML::Node& doc) {
    if (doc.IsNull()) return std::nullopt;
    if (!doc.IsMap()) {
      error(line_of(doc), "a domain file is a mapping with 'domain' and 'descriptors'");
      return std::nullopt;
    }
    RlsDomain out;
    out.file = file_;
    out.line = line_of(doc);
    const auto fields = fields_of(doc, "", {"domain", "descriptors"});
    if (auto it = fields.find("domain"); it == fields.end()) {
      error(out.line,
            "missing field 'domain' (the name requests carry in RateLimitRequest.domain)");
    } else if (auto name = text(it->second, "domain")) {
      if (name->empty()) {
        error(line_of(it->second), "field 'domain' is empty");
      } else {
        out.name = *name;
      }
    }
    if (auto it = fields.find("descriptors"); it != fields.end()) {
      out.descriptors = descriptors(it->second, "");
    }
    if (out.name.empty()) return std::nullopt;
    return out;
  }

 private:
  using Fields = std::map<std::string, YAML::Node>;

  // The fields of a mapping; unknown and repeated ones are reported and left out.
  Fields fields_of(const YAML::Node& map, std::string_view where,
                   std::initializer_list<std::string_view> accepted,
                   std::initializer_list<std::string_view> unsupported = {}) {
    Fields out;
    std::map<std::string, int> lines;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const int line = line_of(it->first);
      if (!it->first.IsScalar()) {
        error(line, std::string(where) + "a field name must be a plain word");
        continue;
      }
      const std::string key = it->first.Scalar();
      if (std::find(unsupported.begin(), unsupported.end(), key) != unsupported.end()) {
        error(line, std::string(where) + "field " + quoted(key) +
                        " (envoyproxy/ratelimit) is not supported by Sluice");
        continue;
      }
      if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
        error(line, std::string(where) + "unknown field " + quoted(key) +
                        " (accepted: " + joined(accepted) + ")");
        continue;
      }
      if (auto seen = lines.find(key); seen != lines.end()) {
        error(line, std::string(where) + "field " + quoted(key) + " given twice (first at line " +
                        std::to_string(seen->second) + ")");
        continue;
      }
      lines.emplace(key, line);
      out.emplace(key, it->second);
    }
    return out;
  }

  // The fields of `node`, which must be a mapping (else `shape` is reported at `where`).
  // `inner` prefixes the field errors ("rate_limit: ").
  std::optional<Fields> mapping(const YAML::Node& node, const std::string& where,
                                std::string_view shape,
                                std::initializer_list<std::string_view> accepted,
                                std::initializer_list<std::string_view> unsupported,
                                std::string_view inner = "") {
    if (!node.IsMap()) {
      error(line_of(node), where + std::string(shape));
      return std::nullopt;
    }
    return fields_of(node, where + std::string(inner), accepted, unsupported);
  }

  std::optional<std::string> text(const YAML::Node& node, std::string_view field) {
    if (node.IsNull()) return std::string();
    if (!node.IsScalar()) {
      error(line_of(node), "field " + quoted(field) + " must be a string");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<bool> flag(const YAML::Node& node, std::string_view field) {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      error(line_of(node), "field " + quoted(field) + " must be true or false");
      return std::nullopt;
    }
    return value;
  }

  std::optional<std::uint32_t> count(const YAML::Node& node, std::string_view field) {
    const std::string s = node.IsScalar() ? node.Scalar() : std::string();
    const bool digits = !s.empty() && s.size() <= 10 && std::all_of(s.begin(), s.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    if (!digits || std::stoull(s) > 0xffffffffull) {
      error(line_of(node), "field " + quoted(field) + " must be a whole number from 0 to " +
                               "4294967295 (a uint32 in the RLS protocol), not " +
                               quoted(node.IsScalar() ? s : "a collection"));
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(std::stoull(s));
  }

  // `path` names the level in errors: "descriptor 'remote_address': ".
  std::vector<RlsDescriptor> descriptors(const YAML::Node& node, const std::string& path) {
    std::vector<RlsDescriptor> out;
    if (node.IsNull()) return out;
    if (!node.IsSequence()) {
      error(line_of(node), path + "field 'descriptors' must be a list");
      return out;
    }
    std::map<std::pair<std::string, std::string>, int> seen;  // (key, value) -> line
    for (const auto& item : node) {
      auto d = descriptor(item, path);
      if (!d) continue;
      auto [it, fresh] = seen.emplace(std::make_pair(d->key, d->value), d->line);
      if (!fresh) {
        error(d->line,
              path + "descriptor " + quoted(d->key + (d->value.empty() ? "" : "=" + d->value)) +
                  " given twice on this level (first at line " + std::to_string(it->second) + ")");
        continue;
      }
      out.push_back(std::move(*d));
    }
    return out;
  }

  std::optional<RlsDescriptor> descriptor(const YAML::Node& node, const std::string& path) {
    const auto fields = mapping(node, path,
                                "a descriptor is a mapping with 'key' (and 'value', 'rate_limit', "
                                "'descriptors', 'shadow_mode')",
                                {"key", "value", "rate_limit", "descriptors", "shadow_mode",
                                 "detailed_metric", "value_to_metric"},
                                {"share_threshold"});
    if (!fields) return std::nullopt;
    RlsDescriptor out;
    out.line = line_of(node);
    bool ok = true;
    if (auto it = fields->find("key"); it == fields->end()) {
      error(out.line, path + "descriptor has no 'key'");
      ok = false;
    } else if (auto key = text(it->second, "key"); !key || key->empty()) {
      if (key) error(line_of(it->second), path + "descriptor has an empty 'key'");
      ok = false;
    } else {
      out.key = *key;
    }
    if (auto it = fields->find("value"); it != fields->end()) {
      if (auto value = text(it->second, "value")) {
        out.value = *value;
      } else {
        ok = false;
      }
    }
    const std::string here =
        path + "descriptor " + quoted(out.key + (out.value.empty() ? "" : "=" + out.value)) + ": ";
    if (auto it = fields->find("rate_limit"); it != fields->end()) {
      out.rate_limit = rate_limit(it->second, here);
      ok = ok && out.rate_limit.has_value();
    }
    if (auto it = fields->find("shadow_mode"); it != fields->end()) {
      const auto shadow = flag(it->second, "shadow_mode");
      out.shadow_mode = shadow.value_or(false);
      ok = ok && shadow.has_value();
    }
    for (const char* metric : {"detailed_metric", "value_to_metric"}) {
      // Statistics naming only in envoyproxy/ratelimit: read and checked, changes no decision.
      if (auto it = fields->find(metric); it != fields->end()) ok = flag(it->second, metric) && ok;
    }
    if (auto it = fields->find("descriptors"); it != fields->end()) {
      out.descriptors = descriptors(it->second, here);
    }
    if (!ok) return std::nullopt;
    return out;
  }

  std::optional<RlsRateLimit> rate_limit(const YAML::Node& node, const std::string& where) {
    const auto map = mapping(node, where,
                             "'rate_limit' is a mapping with 'unit' and 'requests_per_unit' (or "
                             "'unlimited: true')",
                             {"unit", "requests_per_unit", "unlimited", "name", "algorithm"},
                             {"replaces"}, "rate_limit: ");
    if (!map) return std::nullopt;
    const Fields& fields = *map;
    RlsRateLimit out;
    const int line = line_of(node);
    bool ok = true;
    if (auto it = fields.find("unlimited"); it != fields.end()) {
      const auto u = flag(it->second, "unlimited");
      out.unlimited = u.value_or(false);
      ok = u.has_value();
    }
    if (auto it = fields.find("name"); it != fields.end()) {
      const auto name = text(it->second, "name");
      out.name = name.value_or("");
      ok = ok && name.has_value();
    }
    const auto unit = fields.find("unit");
    const auto rpu = fields.find("requests_per_unit");
    const auto algorithm = fields.find("algorithm");
    if (out.unlimited) {
      for (const auto& f : {unit, rpu, algorithm}) {
        if (f != fields.end()) {
          error(line_of(f->second), where + "an unlimited rate_limit takes no " + quoted(f->first));
          ok = false;
        }
      }
      return ok ? std::optional(out) : std::nullopt;
    }
    if (unit == fields.end()) {
      error(line, where + "rate_limit has no 'unit' (second, minute, hour or day)");
      ok = false;
    } else if (auto u = text(unit->second, "unit")) {
      const std::string name = lower(*u);
      const auto row = std::find_if(std::begin(kUnits), std::end(kUnits),
                                    [&](const UnitRow& r) { return r.name == name; });
      if (row == std::end(kUnits)) {
        error(line_of(unit->second),
              where + "unit " + quoted(*u) + " is not one of second, minute, hour, day" +
                  (name == "month" || name == "year"
                       ? " (a calendar month or year has no fixed length for a window)"
                       : ""));
        ok = false;
      } else {
        out.unit = row->unit;
      }
    } else {
      ok = false;
    }
    if (rpu == fields.end()) {
      error(line, where + "rate_limit has no 'requests_per_unit' (0 refuses every request)");
      ok = false;
    } else if (auto n = count(rpu->second, "requests_per_unit")) {
      out.requests_per_unit = *n;
    } else {
      ok = false;
    }
    if (algorithm != fields.end()) {
      if (auto a = text(algorithm->second, "algorithm")) {
        out.algorithm = *a;
      } else {
        ok = false;
      }
    }
    if (!ok) return std::nullopt;
    if (auto spec = rls_limit_spec(out); !spec) {
      error(algorithm != fields.end() ? line_of(algorithm->second) : line, where + spec.error());
      return std::nullopt;
    }
    return out;
  }

  std::string file_;
  std::vector<RlsConfigError>& errors_;
};

void sort_by_line(std::vector<RlsConfigError>& errors) {
  std::stable_sort(
      errors.begin(), errors.end(),
      [](const RlsConfigError& a, const RlsConfigError& b) { return a.line < b.line; });
}

// Parses `yaml` into `domains`, reporting problems to `errors`.
void read_text(std::string_view yaml, const std::string& file, std::vector<RlsDomain>& domains,
               std::vector<RlsConfigError>& errors) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    errors.push_back({file, std::max(e.mark.line, 0) + 1, "YAML syntax: " + e.msg});
    return;
  }
  std::vector<RlsConfigError> found;
  Reader reader(file, found);
  for (const auto& doc : docs) {
    if (auto d = reader.domain(doc)) domains.push_back(std::move(*d));
  }
  sort_by_line(found);
  errors.insert(errors.end(), found.begin(), found.end());
}

RlsLoaded finish(std::vector<RlsDomain> domains, std::vector<RlsConfigError> errors) {
  std::map<std::string, const RlsDomain*> first;
  for (const auto& d : domains) {
    auto [it, fresh] = first.emplace(d.name, &d);
    if (!fresh) {
      errors.push_back({d.file, d.line,
                        "domain " + quoted(d.name) + " defined twice (first at " +
                            it->second->file + ":" + std::to_string(it->second->line) + ")"});
    }
  }
  RlsLoaded out;
  if (errors.empty()) {
    out.config.emplace();
    out.config->domains = std::move(domains);
  }
  out.errors = std::move(errors);
  return out;
}

}  // namespace

core::Nanos unit_length(RlsUnit unit) {
  switch (unit) {
    case RlsUnit::kSecond:
      return core::kNanosPerSecond;
    case RlsUnit::kMinute:
      return core::kNanosPerMinute;
    case RlsUnit::kHour:
      return core::kNanosPerHour;
    case RlsUnit::kDay:
      return 24 * core::kNanosPerHour;
  }
  return core::kNanosPerSecond;
}

std::string_view unit_name(RlsUnit unit) { return row_of(unit).name; }

std::string RlsConfigError::format() const {
  return line > 0 ? file + ":" + std::to_string(line) + ": " + message : file + ": " + message;
}

core::Expected<spec::LimitSpec> rls_limit_spec(const RlsRateLimit& limit) {
  const std::string algorithm = limit.algorithm.empty() ? "fixed-window" : limit.algorithm;
  const std::string n = std::to_string(limit.requests_per_unit);
  const std::string window(row_of(limit.unit).window);
  std::string text;
  if (algorithm == "fixed-window" || algorithm == "sliding-window") {
    text = algorithm + ":limit=" + n + ",window=" + window;
  } else if (algorithm == "gcra" || algorithm == "token-bucket") {
    if (limit.requests_per_unit == 0) {
      return core::make_error("algorithm " + quoted(algorithm) +
                              " needs requests_per_unit of at least 1 (0 refuses every request: "
                              "use the default fixed-window)");
    }
    // The same capacity: gcra's limit is burst+1, a token bucket's its burst.
    const std::string burst = algorithm == "gcra" ? std::to_string(limit.requests_per_unit - 1) : n;
    text = algorithm + ":rate=" + n + "/" + window + ",burst=" + burst;
  } else {
    std::string accepted;
    for (auto a : kAlgorithms) accepted += (accepted.empty() ? "" : ", ") + std::string(a);
    return core::make_error("algorithm " + quoted(algorithm) + " cannot answer a rate limit " +
                            "request (accepted: " + accepted + ")");
  }
  return spec::parse_limit_spec(text);
}

RlsLoaded load_rls_config_text(std::string_view yaml, const std::string& file_name) {
  std::vector<RlsDomain> domains;
  std::vector<RlsConfigError> errors;
  read_text(yaml, file_name, domains, errors);
  return finish(std::move(domains), std::move(errors));
}

RlsLoaded load_rls_config_files(const std::vector<std::string>& paths) {
  std::vector<RlsDomain> domains;
  std::vector<RlsConfigError> errors;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      errors.push_back({path, 0, "cannot read the file"});
      continue;
    }
    std::ostringstream text;
    text << in.rdbuf();
    read_text(text.str(), path, domains, errors);
  }
  return finish(std::move(domains), std::move(errors));
}

}  // namespace sluice::server
