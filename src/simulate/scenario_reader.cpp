// The scenario reader (sluice/simulate/scenario.hpp): YAML through yaml-cpp, every field checked
// against its shape, every error as "WHERE:LINE: problem".
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <set>
#include <span>

#include "sluice/core/utf8.hpp"
#include "sluice/simulate/scenario.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::simulate {
namespace {

constexpr std::array<std::string_view, 6> kShapeNames{"steady",   "poisson", "burst",
                                                      "boundary", "diurnal", "flood"};
constexpr std::size_t kMaxNameBytes = 100;

// Thrown inside the reader only, caught by parse_scenario and turned into its error.
struct Problem {
  int line;
  std::string message;
};

int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

[[noreturn]] void fail(const YAML::Node& node, std::string message) {
  throw Problem{line_of(node), std::move(message)};
}

std::string scalar(const YAML::Node& node, std::string_view field) {
  if (!node.IsScalar()) fail(node, "field '" + std::string(field) + "' must be a single value");
  return node.Scalar();
}

// A value parsed by one of core's parsers, or the parser's error at the value's line.
template <class T>
T parsed(const YAML::Node& node, std::string_view field, core::Expected<T> value) {
  if (!value) fail(node, "field '" + std::string(field) + "': " + value.error());
  return *value;
}

core::Nanos duration(const YAML::Node& node, std::string_view field) {
  return parsed(node, field, core::parse_duration(scalar(node, field)));
}

core::Rate rate(const YAML::Node& node, std::string_view field) {
  return parsed(node, field, core::parse_rate(scalar(node, field)));
}

std::int64_t count(const YAML::Node& node, std::string_view field, std::int64_t min,
                   std::int64_t max) {
  const auto n = parsed(node, field, core::parse_count(scalar(node, field), field));
  if (n < min || n > max) {
    fail(node, "field '" + std::string(field) + "': " + std::to_string(n) + " is outside " +
                   std::to_string(min) + ".." + std::to_string(max));
  }
  return n;
}

// Names and keys end up in a replay trace (--trace) and a CSV: no comma, no control character.
std::string name(const YAML::Node& node, std::string_view field) {
  std::string text = scalar(node, field);
  const bool bad_char = std::any_of(text.begin(), text.end(), [](char c) {
    return c == ',' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (text.empty() || text.size() > kMaxNameBytes || bad_char) {
    fail(node, "field '" + std::string(field) + "': '" + text + "' must be 1 to " +
                   std::to_string(kMaxNameBytes) + " bytes with no comma or control character");
  }
  return text;
}

// The map's pairs in order, refusing a repeated key or one not in `known`.
std::vector<std::pair<std::string, YAML::Node>> fields(const YAML::Node& map,
                                                       const std::string& what,
                                                       std::span<const std::string_view> known) {
  if (!map.IsMap()) fail(map, what + " must be a map of fields");
  std::vector<std::pair<std::string, YAML::Node>> out;
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = scalar(it->first, "name");
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(it->first, what + ": unknown field '" + key + "' (accepted: " + list + ")");
    }
    if (!seen.insert(key).second) fail(it->first, "field '" + key + "' given twice");
    out.emplace_back(key, it->second);
  }
  return out;
}

// The fields each shape uses besides name, shape, key, keys, cost, start and end.
std::vector<std::string_view> shape_fields(Shape shape) {
  switch (shape) {
    case Shape::kSteady:
    case Shape::kPoisson:
    case Shape::kFlood:
      return {"rate"};
    case Shape::kBurst:
      return {"count", "at", "every"};
    case Shape::kBoundary:
      return {"count", "at", "gap", "every"};
    case Shape::kDiurnal:
      return {"low", "high", "period"};
  }
  return {};
}

Shape shape_of(const YAML::Node& node) {
  const std::string text = scalar(node, "shape");
  for (std::size_t i = 0; i < kShapeNames.size(); ++i) {
    if (text == kShapeNames[i]) return static_cast<Shape>(i);
  }
  fail(node, "field 'shape': unknown shape '" + text +
                 "' (accepted: steady, poisson, burst, boundary, diurnal, flood)");
}

// How each field of a source is read into it ("shape" is read first, on its own).
struct FieldReader {
  std::string_view field;
  void (*read)(Source& s, const YAML::Node& v, std::string_view field);
};
constexpr std::array<FieldReader, 14> kFieldReaders{{
    {"name", [](Source& s, const YAML::Node& v, std::string_view f) { s.name = name(v, f); }},
    {"key", [](Source& s, const YAML::Node& v, std::string_view f) { s.key = name(v, f); }},
    {"keys", [](Source& s, const YAML::Node& v,
                std::string_view f) { s.keys = count(v, f, 1, kMaxKeysPerSource); }},
    {"cost", [](Source& s, const YAML::Node& v,
                std::string_view f) { s.cost = count(v, f, 1, 1'000'000'000); }},
    {"start", [](Source& s, const YAML::Node& v, std::string_view f) { s.start = duration(v, f); }},
    {"end", [](Source& s, const YAML::Node& v, std::string_view f) { s.end = duration(v, f); }},
    {"rate", [](Source& s, const YAML::Node& v, std::string_view f) { s.rate = rate(v, f); }},
    {"high", [](Source& s, const YAML::Node& v, std::string_view f) { s.rate = rate(v, f); }},
    {"low", [](Source& s, const YAML::Node& v,
               std::string_view f) { s.low = scalar(v, f) == "0" ? core::Rate{} : rate(v, f); }},
    {"count", [](Source& s, const YAML::Node& v,
                 std::string_view f) { s.count = count(v, f, 1, kMaxBurstCount); }},
    {"at", [](Source& s, const YAML::Node& v, std::string_view f) { s.at = duration(v, f); }},
    {"every", [](Source& s, const YAML::Node& v, std::string_view f) { s.every = duration(v, f); }},
    {"gap", [](Source& s, const YAML::Node& v, std::string_view f) { s.gap = duration(v, f); }},
    {"period",
     [](Source& s, const YAML::Node& v, std::string_view f) { s.period = duration(v, f); }},
}};

void read_field(Source& s, const std::string& field, const YAML::Node& v) {
  for (const auto& r : kFieldReaders) {
    if (r.field == field) r.read(s, v, field);
  }
}

void check_source(const Source& s, const YAML::Node& node, const std::set<std::string>& given) {
  const std::string what = "source '" + s.name + "': ";
  auto need = [&](std::string_view field) {
    if (!given.count(std::string(field)))
      fail(node, what + "field '" + std::string(field) + "' is required for shape " +
                     std::string(shape_name(s.shape)));
  };
  if (s.end != kUntilTheEnd && s.end <= s.start) fail(node, what + "'end' must be after 'start'");
  switch (s.shape) {
    case Shape::kSteady:
    case Shape::kPoisson:
    case Shape::kFlood:
      need("rate");
      break;
    case Shape::kBurst:
      need("count");
      break;
    case Shape::kBoundary:
      need("count");
      need("at");
      if (s.gap <= 0 || s.gap > s.at)
        fail(node, what + "'gap' must be more than 0 and at most 'at'");
      if (given.count("every") && s.every <= s.gap) fail(node, what + "'every' must exceed 'gap'");
      break;
    case Shape::kDiurnal:
      need("low");
      need("high");
      if (s.low.count != 0 && s.low.per_second() > s.rate.per_second()) {
        fail(node, what + "'low' must not exceed 'high'");
      }
      if (given.count("period") && s.period <= 0) fail(node, what + "'period' must be more than 0");
      break;
  }
  if (given.count("every") && s.every <= 0) fail(node, what + "'every' must be more than 0");
}

Source read_source(const YAML::Node& node, std::size_t index) {
  if (!node.IsMap()) fail(node, "sources: item " + std::to_string(index + 1) + " must be a map");
  if (!node["shape"]) fail(node, "sources: item " + std::to_string(index + 1) + " has no 'shape'");
  Source s;
  s.line = line_of(node);
  s.shape = shape_of(node["shape"]);
  s.name = std::string(shape_name(s.shape));
  if (s.shape == Shape::kFlood) s.keys = 1000;
  std::vector<std::string_view> known{"name", "shape", "key", "keys", "cost", "start", "end"};
  for (auto f : shape_fields(s.shape)) known.push_back(f);
  const std::string what =
      "source " + std::to_string(index + 1) + " (shape " + std::string(shape_name(s.shape)) + ")";
  std::set<std::string> given;
  for (auto& [field, v] : fields(node, what, known)) {
    given.insert(field);
    read_field(s, field, v);
  }
  if (!given.count("at")) s.at = s.start;
  if (s.key.empty()) s.key = s.name;
  check_source(s, node, given);
  return s;
}

std::vector<SuggestedLimit> read_limits(const YAML::Node& node) {
  if (!node.IsSequence()) fail(node, "field 'limits' must be a list of limit specs");
  std::vector<SuggestedLimit> out;
  for (const auto& item : node) {
    const std::string text = scalar(item, "limits");
    if (auto s = spec::parse_limit_spec(text); !s) fail(item, "limit '" + text + "': " + s.error());
    out.push_back({text, line_of(item)});
  }
  return out;
}

void read_sources(Scenario& sc, const YAML::Node& node) {
  if (!node.IsSequence() || node.size() == 0)
    fail(node, "field 'sources' must be a list of sources");
  if (node.size() > kMaxSources) {
    fail(node, "field 'sources': " + std::to_string(node.size()) + " sources, at most " +
                   std::to_string(kMaxSources));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    Source s = read_source(node[i], i);
    if (!names.insert(s.name).second) {
      fail(node[i], "source name '" + s.name + "' used twice (give each source its own 'name')");
    }
    sc.sources.push_back(std::move(s));
  }
}

Scenario read_scenario(const YAML::Node& root) {
  Scenario sc;
  bool has_sources = false;
  static constexpr std::array<std::string_view, 5> kTop{"description", "duration", "bucket",
                                                        "limits", "sources"};
  for (auto& [field, v] : fields(root, "a scenario", kTop)) {
    if (field == "description") sc.description = scalar(v, field);
    if (field == "duration") sc.duration = duration(v, field);
    if (field == "bucket") sc.bucket = duration(v, field);
    if (field == "limits") sc.limits = read_limits(v);
    if (field == "sources") {
      read_sources(sc, v);
      has_sources = true;
    }
    if ((field == "duration" && sc.duration <= 0) || (field == "bucket" && sc.bucket <= 0)) {
      fail(v, "field '" + field + "' must be more than 0");
    }
  }
  if (!has_sources) fail(root, "a scenario needs 'sources' (a list of traffic sources)");
  return sc;
}

}  // namespace

std::string_view shape_name(Shape shape) { return kShapeNames[static_cast<std::size_t>(shape)]; }

core::Expected<Scenario> parse_scenario(std::string_view yaml, const std::string& where) {
  auto error = [&](int line, const std::string& message) {
    return core::make_error(where + ":" + std::to_string(std::max(line, 1)) + ": " + message);
  };
  // YAML is UTF-8, and names and descriptions go into an HTML page: refuse other bytes here.
  if (auto bad = core::invalid_utf8_at(yaml)) {
    const std::string_view before = yaml.substr(0, *bad);
    std::string_view line = yaml.substr(before.rfind('\n') + 1);  // npos + 1: the first line
    line = line.substr(0, line.find('\n'));
    return error(static_cast<int>(1 + std::count(before.begin(), before.end(), '\n')),
                 "the line " + core::invalid_utf8_problem(line));
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::DeepRecursion& e) {
    return error(e.mark.line + 1,
                 "YAML: nested " + std::to_string(e.depth()) + " levels deep (a scenario needs 3)");
  } catch (const YAML::Exception& e) {
    return error(e.mark.line + 1, "YAML: " + e.msg);
  }
  try {
    Scenario sc = read_scenario(root);
    sc.where = where;
    return sc;
  } catch (const Problem& p) {
    return error(p.line, p.message);
  } catch (const YAML::Exception& e) {
    return error(e.mark.line + 1, "YAML: " + e.msg);
  }
}

std::string describe(const Source& s) {
  auto at = [](core::Nanos t) { return t == 0 ? std::string("0s") : core::format_duration(t); };
  std::string out(shape_name(s.shape));
  switch (s.shape) {
    case Shape::kSteady:
    case Shape::kPoisson:
    case Shape::kFlood:
      out += " " + core::format_rate(s.rate);
      break;
    case Shape::kBurst:
      out += " " + std::to_string(s.count) + " at " + at(s.at);
      break;
    case Shape::kBoundary:
      out += " " + std::to_string(s.count) + " at " + at(s.at - s.gap) + " and at " + at(s.at);
      break;
    case Shape::kDiurnal:
      out += " " + (s.low.count == 0 ? std::string("0") : core::format_rate(s.low)) + " to " +
             core::format_rate(s.rate);
      if (s.period != 0) out += " over " + at(s.period);
      break;
  }
  if ((s.shape == Shape::kBurst || s.shape == Shape::kBoundary) && s.every != 0) {
    out += ", every " + at(s.every);
  }
  if (s.keys > 1) out += ", " + std::to_string(s.keys) + " keys";
  if (s.cost != 1) out += ", cost " + std::to_string(s.cost);
  if (s.start != 0 || s.end != kUntilTheEnd) {
    out += ", from " + at(s.start) + (s.end == kUntilTheEnd ? std::string() : " to " + at(s.end));
  }
  return out;
}

}  // namespace sluice::simulate
