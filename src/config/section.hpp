// Reading a YAML mapping field by field, for the main config and the envoyproxy/ratelimit
// format alike: unknown and repeated fields reported at their line, each value read and
// checked with an error that names its field, and where every field was written. It reads the
// compact tree of yaml_tree.hpp, which bounds what a hostile file can make the parser build.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "internal.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/core/time.hpp"
#include "sluice/core/utf8.hpp"
#include "yaml_tree.hpp"

namespace sluice::config::internal {

template <class Row, class Show, std::size_t N>
std::string join(const Row (&rows)[N], Show show) {
  std::string out;
  for (const auto& r : rows) out += (out.empty() ? "" : ", ") + std::string(show(r));
  return out;
}

inline int line_of(const yaml::Node& node) { return node.line(); }

inline std::string describe(const yaml::Node& node) {
  switch (node.type()) {
    case yaml::Type::kSequence:
      return "a list";
    case yaml::Type::kMap:
      return "a mapping";
    case yaml::Type::kScalar:
      return quoted(node.scalar());
    default:
      return "nothing";
  }
}

// ---------------------------------------------------------------------------------------------
// Reading YAML: a mapping field by field.

// A list item with where it was written.
struct Item {
  std::string text;
  std::string path;  // "servers.1"
  int line = 0;
};

// One named entry of a mapping of entries (`rules:`, `upstreams:`).
struct Entry {
  std::string name;
  int line = 0;
  yaml::Node node;
};

// A YAML mapping read field by field. Unknown and repeated fields are reported on construction.
// Each accessor returns nullopt for an absent field and, after reporting it (at its line,
// marking it bad in the origin), for a malformed one. A null value of a collection reads as
// empty; of a scalar it is an error.
class Section {
 public:
  Section(const yaml::Node& node, std::string prefix, std::string path, Errors& errors,
          Origin& origin, std::initializer_list<std::string_view> accepted)
      : prefix_(std::move(prefix)), path_(std::move(path)), errors_(errors), origin_(origin) {
    std::string names;
    for (auto f : accepted) names += (names.empty() ? "" : ", ") + std::string(f);
    if (node.is_null()) return;
    if (!node.is_map()) {
      errors_.add(line_of(node), prefix_ + (path_.empty() ? "" : "field " + quoted(path_) + ": ") +
                                     "expected a mapping of fields (" + names + "), got " +
                                     describe(node));
      for (auto f : accepted) origin_.mark_bad(full(f));
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string key(node.key(i).scalar());
      const int line = line_of(node.key(i));
      if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
        errors_.add(line,
                    prefix_ + "unknown field " + quoted(full(key)) + " (accepted: " + names + ")");
        continue;
      }
      if (auto seen = fields_.find(key); seen != fields_.end()) {
        errors_.add(line, prefix_ + "field " + quoted(full(key)) + " given twice (first at line " +
                              std::to_string(seen->second.line) + ")");
        continue;
      }
      fields_.emplace(key, Field{node.value(i), line});
      origin_.fields[full(key)] = line;
    }
  }

  bool has(std::string_view f) const { return fields_.contains(f); }
  // Whether field `f` is a mapping (a field that takes a word or a mapping of its parts).
  bool is_map(std::string_view f) const {
    auto it = fields_.find(f);
    return it != fields_.end() && it->second.node.is_map();
  }

  // Whether field `f` is the plain word `word` (`admin: off`), before it is read as a value.
  bool text_is(std::string_view f, std::string_view word) {
    auto it = fields_.find(f);
    return it != fields_.end() && it->second.node.is_scalar() && it->second.node.scalar() == word;
  }

  // Reports `problem` about field `f` (a path below this section, "servers.1") at `line`.
  void fail(std::string_view f, int line, const std::string& problem) {
    const std::string path = full(f);
    errors_.add(line, prefix_ + "field " + shown_field(path) + ": " + problem);
    origin_.mark_bad(path);
  }
  void fail(std::string_view f, const std::string& problem) { fail(f, line(f), problem); }

  std::optional<std::string> text(std::string_view f) {
    auto node = find(f);
    if (!node) return std::nullopt;
    if (!node->is_scalar()) {
      fail(f, node->is_null() ? "has no value" : "expected text, got " + describe(*node));
      return std::nullopt;
    }
    // YAML is UTF-8, and values go out again in JSON replies and metric labels.
    if (core::invalid_utf8_at(node->scalar())) {
      fail(f, core::invalid_utf8_problem(node->scalar()));
      return std::nullopt;
    }
    return std::string(node->scalar());
  }

  // A whole number in [min, max].
  std::optional<std::int64_t> number(std::string_view f, std::int64_t min, std::int64_t max) {
    auto t = text(f);
    if (!t) return std::nullopt;
    auto n = core::parse_count(*t, full(f));
    if (!n) {
      fail(f, "expected a whole number, got " + quoted(*t));
      return std::nullopt;
    }
    if (*n < min || *n > max) {
      fail(f, std::to_string(*n) + " is out of range (accepted: " + std::to_string(min) + " to " +
                  std::to_string(max) + ")");
      return std::nullopt;
    }
    return *n;
  }

  std::optional<bool> flag(std::string_view f) {
    auto t = text(f);
    if (!t) return std::nullopt;
    if (*t == "true" || *t == "True" || *t == "TRUE") return true;
    if (*t == "false" || *t == "False" || *t == "FALSE") return false;
    fail(f, "expected true or false, got " + quoted(*t));
    return std::nullopt;
  }

  // A positive duration ("250ms").
  std::optional<core::Nanos> duration(std::string_view f) {
    return parsed<core::Nanos>(f, [](const std::string& t) -> core::Expected<core::Nanos> {
      auto d = core::parse_duration(t);
      if (d && *d <= 0) return core::make_error("must be longer than 0");
      return d;
    });
  }

  std::optional<Endpoint> endpoint(std::string_view f) {
    return parsed<Endpoint>(f, parse_endpoint);
  }

  // Text, then `parse` of it; reports the parser's error.
  template <class T, class Parse>
  std::optional<T> parsed(std::string_view f, Parse parse) {
    auto t = text(f);
    if (!t) return std::nullopt;
    auto v = parse(*t);
    if (!v) {
      fail(f, v.error());
      return std::nullopt;
    }
    return *v;
  }

  template <class E, std::size_t N>
  std::optional<E> choice(std::string_view f, const Named<E> (&table)[N]) {
    auto t = text(f);
    if (!t) return std::nullopt;
    for (const auto& n : table) {
      if (n.name == *t) return n.value;
    }
    fail(f, "unknown value " + quoted(*t) +
                " (accepted: " + join(table, [](const Named<E>& n) { return n.name; }) + ")");
    return std::nullopt;
  }

  // A list of texts; with `one_ok`, a single text is a list of one.
  std::optional<std::vector<Item>> list(std::string_view f, bool one_ok = false) {
    auto node = find(f);
    if (!node) return std::nullopt;
    std::vector<Item> items;
    if (node->is_null()) return items;
    const std::string path = full(f);
    if (node->is_scalar() && one_ok) {
      if (core::invalid_utf8_at(node->scalar())) {
        fail(f, core::invalid_utf8_problem(node->scalar()));
        return std::nullopt;
      }
      items.push_back({std::string(node->scalar()), path, line(f)});
      return items;
    }
    if (!node->is_sequence()) {
      fail(f, "expected a list (e.g. [a, b]), got " + describe(*node));
      return std::nullopt;
    }
    bool ok = true;
    for (std::size_t i = 0; i < node->size(); ++i) {
      const yaml::Node item = node->item(i);
      const std::string item_path = std::string(f) + "." + std::to_string(i);
      origin_.fields[full(item_path)] = line_of(item);
      if (!item.is_scalar()) {
        fail(item_path, line_of(item),
             "item " + std::to_string(i + 1) + " is " + describe(item) + ", expected text");
        ok = false;
        continue;
      }
      if (core::invalid_utf8_at(item.scalar())) {
        fail(item_path, line_of(item),
             "item " + std::to_string(i + 1) + " " + core::invalid_utf8_problem(item.scalar()));
        ok = false;
        continue;
      }
      items.push_back({std::string(item.scalar()), item_path, line_of(item)});
    }
    if (!ok) return std::nullopt;
    return items;
  }

  // A list of texts, each read by `parse` (returning core::Expected<T>); an item that fails is
  // reported at its line and left out.
  template <class T, class Parse>
  std::vector<T> parsed_list(std::string_view f, Parse parse, bool one_ok = false) {
    std::vector<T> out;
    auto items = list(f, one_ok);
    if (!items) return out;
    for (const auto& item : *items) {
      auto v = parse(item.text);
      if (v) {
        out.push_back(*v);
      } else {
        fail(item.path, item.line, v.error());
      }
    }
    return out;
  }

  // A nested mapping; null reads as an empty one.
  std::optional<Section> section(std::string_view f,
                                 std::initializer_list<std::string_view> accepted) {
    auto node = find(f);
    if (!node) return std::nullopt;
    if (!node->is_null() && !node->is_map()) {
      fail(f, "expected a mapping of fields, got " + describe(*node));
      return std::nullopt;
    }
    return Section(*node, prefix_, full(f), errors_, origin_, accepted);
  }

  // A mapping of named entries; repeated names are reported (the first one counts).
  std::vector<Entry> entries(std::string_view f, std::string_view what) {
    std::vector<Entry> out;
    auto node = find(f);
    if (!node || node->is_null()) return out;
    if (!node->is_map()) {
      fail(f, "expected a mapping of " + std::string(what) + "s by name, got " + describe(*node));
      return out;
    }
    std::unordered_map<std::string_view, int> first_line;  // a config may hold 100k rules
    for (std::size_t i = 0; i < node->size(); ++i) {
      Entry e{std::string(node->key(i).scalar()), line_of(node->key(i)), node->value(i)};
      const auto [first, fresh] = first_line.emplace(node->key(i).scalar(), e.line);
      if (!fresh) {
        errors_.add(e.line, "duplicate " + std::string(what) + " name " + quoted(e.name) +
                                " (first at line " + std::to_string(first->second) + ")");
        continue;
      }
      out.push_back(std::move(e));
    }
    return out;
  }

  // The items of a list of mappings (`routes:`).
  std::vector<yaml::Node> sequence(std::string_view f) {
    std::vector<yaml::Node> out;
    auto node = find(f);
    if (!node || node->is_null()) return out;
    if (!node->is_sequence()) {
      fail(f, "expected a list, got " + describe(*node));
      return out;
    }
    for (std::size_t i = 0; i < node->size(); ++i) out.push_back(node->item(i));
    return out;
  }

  int line(std::string_view f) const { return origin_.at(full(f)); }

 private:
  struct Field {
    yaml::Node node;
    int line;
  };

  std::optional<yaml::Node> find(std::string_view f) const {
    auto it = fields_.find(f);
    if (it == fields_.end()) return std::nullopt;
    return it->second.node;
  }
  std::string full(std::string_view f) const {
    return path_.empty() ? std::string(f) : path_ + "." + std::string(f);
  }

  std::string prefix_;
  std::string path_;
  Errors& errors_;
  Origin& origin_;
  std::map<std::string, Field, std::less<>> fields_;
};

// ---------------------------------------------------------------------------------------------
// Field readers the main config and the RLS section share.

// A share of a rate, in (0, 1] ("0.25").
inline core::Expected<double> parse_share(const std::string& t) {
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v > 0 && v <= 1)) {
    return core::make_error("expected a share of the rate between 0 and 1 (e.g. 0.25), got " +
                            quoted(t));
  }
  return v;
}

// The Redis options a rule may set, and the `redis:` section's defaults for them.
struct RedisOptionFields {
  std::optional<FailurePolicy> on_failure;
  std::optional<double> local_share;
  std::optional<std::int64_t> lease;
  std::optional<core::Nanos> lease_ttl;
};
constexpr std::int64_t kMaxLease = 1'000'000;
inline RedisOptionFields read_redis_options(Section& s) {
  RedisOptionFields o;
  o.on_failure = s.choice("on_failure", kFailurePolicies);
  o.local_share = s.parsed<double>("local_share", parse_share);
  o.lease = s.number("lease", 0, kMaxLease);
  o.lease_ttl = s.duration("lease_ttl");
  return o;
}

}  // namespace sluice::config::internal
