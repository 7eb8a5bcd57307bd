// Parser of the limit spec language (sluice/spec/limit_spec.hpp). Each algorithm is a row of
// kAlgorithms: its parameters (with kinds and defaults) and a builder of typed core params.
#include "sluice/spec/limit_spec.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sluice/spec/calendar_zones.hpp"

namespace sluice::spec {
namespace {

using core::Error;
using core::Expected;
using core::make_error;
using core::Nanos;
using core::Rate;

enum class Kind { kRate, kCount, kDuration, kDecimal, kFlag, kText };

struct Param {
  std::string_view name;
  Kind kind;
  std::optional<std::string_view> default_value;  // nullopt: required
  // A flag that stands instead of another parameter when set (nginx's nodelay over delay): the
  // canonical text names only the one in force, so that it parses again.
  std::string_view overrides = {};
  // Left out of the canonical text unless written, so that specs from before it existed keep
  // their canonical text (Redis keys and rule comparisons are made of it).
  bool quiet = false;
};

// Parameter values after parsing, by name.
struct Values {
  std::map<std::string, Rate, std::less<>> rates;
  std::map<std::string, std::int64_t, std::less<>> counts;
  std::map<std::string, Nanos, std::less<>> durations;
  std::map<std::string, double, std::less<>> decimals;
  std::map<std::string, std::string, std::less<>> texts;
  std::map<std::string, bool, std::less<>> given;  // explicitly written by the user
  Rate rate(std::string_view n) const { return rates.find(n)->second; }
  std::int64_t count(std::string_view n) const { return counts.find(n)->second; }
  Nanos duration(std::string_view n) const { return durations.find(n)->second; }
  double decimal(std::string_view n) const { return decimals.find(n)->second; }
  const std::string& text(std::string_view n) const { return texts.find(n)->second; }
  bool has(std::string_view n) const { return given.contains(n); }
};

using Builder = std::function<Expected<AlgorithmParams>(const Values&)>;

struct AlgorithmRow {
  std::string_view name;
  WaitSupport wait;
  std::vector<Param> params;
  Builder build;
};

constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max() / 2000;

Expected<AlgorithmParams> token_bucket(const Values& v) {
  return AlgorithmParams{core::TokenBucket::make(v.rate("rate"), v.count("burst"))};
}

Expected<AlgorithmParams> gcra(const Values& v) {
  auto p = core::Gcra::make(v.rate("rate"), v.count("burst"));
  if (p.interval <= 0) {
    return make_error("gcra: rate '" + core::format_rate(p.rate) +
                      "' gives an emission interval below 1ns; use a lower rate");
  }
  if (!core::Gcra::valid(p)) {
    return make_error("gcra: burst " + std::to_string(p.burst) +
                      " times the emission interval overflows; use a smaller burst");
  }
  return AlgorithmParams{p};
}

Expected<AlgorithmParams> leaky_bucket(const Values& v) {
  if (v.has("delay") && v.has("nodelay")) {
    return make_error(
        "leaky-bucket: 'delay' and 'nodelay' are exclusive (nginx: one or the other)");
  }
  std::int64_t delay = v.count("delay");
  if (v.count("nodelay") == 1) delay = core::LeakyBucket::kNoDelay;
  auto p = core::LeakyBucket::make(v.rate("rate"), v.count("burst"), delay);
  if (p.rate_milli <= 0) {
    return make_error("leaky-bucket: rate '" + core::format_rate(p.rate) +
                      "' is outside nginx's range (whole milli-requests per second, at least "
                      "1/1000 per second)");
  }
  return AlgorithmParams{p};
}

template <class P>
Expected<AlgorithmParams> window(std::string_view name, const Values& v) {
  if (v.duration("window") <= 0) {
    return make_error(std::string(name) + ": window must be positive");
  }
  return AlgorithmParams{P{v.count("limit"), v.duration("window")}};
}

Expected<AlgorithmParams> fixed_window_epoch(const Values& v) {
  return window<core::FixedWindow::Params>("fixed-window", v);
}

// The calendar units a window may be with align=calendar, and their nominal lengths.
struct CalendarRow {
  std::string_view text;
  core::CalendarUnit unit;
  Nanos nominal;
};
constexpr CalendarRow kCalendarUnits[] = {
    {"1d", core::CalendarUnit::kDay, 24 * core::kNanosPerHour},
    {"1w", core::CalendarUnit::kWeek, 7 * 24 * core::kNanosPerHour},
    {"1mo", core::CalendarUnit::kMonth, 31 * 24 * core::kNanosPerHour},
};

// window=DURATION from t=0, or with align=calendar window=1d|1w|1mo in `timezone`.
Expected<AlgorithmParams> fixed_window(const Values& v) {
  const std::string& align = v.text("align");
  const std::string& window = v.text("window");
  if (align == "calendar") {
    for (const CalendarRow& row : kCalendarUnits) {
      if (row.text != window) continue;
      auto calendar = calendar_for(row.unit, v.text("timezone"));
      if (!calendar) return make_error("fixed-window: timezone: " + calendar.error());
      return AlgorithmParams{core::FixedWindow::Params{v.count("limit"), row.nominal, *calendar}};
    }
    return make_error(
        "fixed-window: with align=calendar, window must be 1d, 1w (ISO weeks, from "
        "Monday) or 1mo, got '" +
        window + "'");
  }
  if (align != "epoch") {
    return make_error("fixed-window: align must be epoch (windows from t=0) or calendar, got '" +
                      align + "'");
  }
  for (const CalendarRow& row : kCalendarUnits) {
    if (row.text == window) {
      return make_error("fixed-window: window=" + window +
                        " is a calendar window: add align=calendar (and timezone=ZONE, default "
                        "UTC), or give a fixed length such as 24h");
    }
  }
  if (v.has("timezone")) {
    return make_error("fixed-window: timezone needs align=calendar (epoch windows have no zone)");
  }
  auto d = core::parse_duration(window);
  if (!d) return make_error("fixed-window: bad value for 'window': " + d.error());
  Values plain = v;
  plain.durations["window"] = *d;
  return fixed_window_epoch(plain);
}

Expected<AlgorithmParams> smooth_bursty(const Values& v) {
  return AlgorithmParams{core::SmoothBursty::make(v.rate("rate"), v.duration("max-burst"))};
}

Expected<AlgorithmParams> smooth_warmup(const Values& v) {
  if (v.duration("warmup") < core::kNanosPerMicro) {
    return make_error("smooth-warmup: warmup must be at least 1us (Guava counts it in micros)");
  }
  if (v.decimal("cold-factor") < 1.0) {
    return make_error("smooth-warmup: cold-factor must be at least 1 (a cold limiter is slower)");
  }
  return AlgorithmParams{
      core::SmoothWarmup::make(v.rate("rate"), v.duration("warmup"), v.decimal("cold-factor"))};
}

Expected<AlgorithmParams> queue(const Values& v) {
  const Nanos max_wait = v.duration("max-wait");
  if (max_wait % core::kNanosPerMilli != 0) {
    return make_error("queue: max-wait '" + core::format_duration(max_wait) +
                      "' must be whole milliseconds (Sentinel's maxQueueingTimeMs)");
  }
  if (max_wait / core::kNanosPerMilli > std::numeric_limits<std::int32_t>::max()) {
    return make_error("queue: max-wait is above Sentinel's int range of milliseconds");
  }
  return AlgorithmParams{core::UniformQueue::make(v.rate("rate"), max_wait)};
}

Expected<AlgorithmParams> concurrency(const Values& v) {
  return AlgorithmParams{core::Concurrency::Params{v.count("limit")}};
}

const std::vector<AlgorithmRow>& table() {
  static const std::vector<AlgorithmRow> rows = {
      {"token-bucket",
       WaitSupport::kCallerMaxWait,
       {{"rate", Kind::kRate, {}}, {"burst", Kind::kCount, {}}},
       token_bucket},
      {"gcra",
       WaitSupport::kCallerMaxWait,
       {{"rate", Kind::kRate, {}}, {"burst", Kind::kCount, {}}},
       gcra},
      {"leaky-bucket",
       WaitSupport::kOwnRule,
       {{"rate", Kind::kRate, {}},
        {"burst", Kind::kCount, "0"},
        {"delay", Kind::kCount, "0"},
        {"nodelay", Kind::kFlag, "0", "delay"}},
       leaky_bucket},
      {"fixed-window",
       WaitSupport::kRejectOnly,
       {{"limit", Kind::kCount, {}},
        {"window", Kind::kText, {}},
        {"align", Kind::kText, "epoch", {}, true},
        {"timezone", Kind::kText, "UTC", {}, true}},
       fixed_window},
      {"sliding-log",
       WaitSupport::kRejectOnly,
       {{"limit", Kind::kCount, {}}, {"window", Kind::kDuration, {}}},
       [](const Values& v) { return window<core::SlidingLog::Params>("sliding-log", v); }},
      {"sliding-window",
       WaitSupport::kRejectOnly,
       {{"limit", Kind::kCount, {}}, {"window", Kind::kDuration, {}}},
       [](const Values& v) { return window<core::SlidingWindow::Params>("sliding-window", v); }},
      {"smooth-bursty",
       WaitSupport::kCallerMaxWait,
       {{"rate", Kind::kRate, {}}, {"max-burst", Kind::kDuration, "1s"}},
       smooth_bursty},
      {"smooth-warmup",
       WaitSupport::kCallerMaxWait,
       {{"rate", Kind::kRate, {}},
        {"warmup", Kind::kDuration, {}},
        {"cold-factor", Kind::kDecimal, "3"}},
       smooth_warmup},
      {"queue",
       WaitSupport::kOwnRule,
       {{"rate", Kind::kRate, {}}, {"max-wait", Kind::kDuration, "500ms"}},
       queue},
      {"concurrency", WaitSupport::kNotTimeBased, {{"limit", Kind::kCount, {}}}, concurrency},
  };
  return rows;
}

std::string join_names(const std::vector<Param>& params, bool required_only = false) {
  std::string out;
  for (const Param& p : params) {
    if (required_only && p.default_value) continue;
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

// Plain decimal with an optional fraction: "3", "2.5". No sign, exponent or trailing text.
Expected<double> parse_decimal(std::string_view text, std::string_view what) {
  bool dot = false;
  bool digit = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      digit = false;
      break;
    }
  }
  if (!digit || text.front() == '.' || text.back() == '.') {
    return make_error(std::string(what) + " '" + std::string(text) +
                      "' is not a plain decimal number (e.g. 3 or 2.5)");
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return make_error(std::string(what) + " '" + std::string(text) + "' is out of range");
  }
  return v;
}

// Parses one value by kind into `values`; returns an error message or nothing.
std::optional<std::string> parse_value(const Param& param, std::string_view text, Values& values) {
  const std::string name(param.name);
  switch (param.kind) {
    case Kind::kRate: {
      auto r = core::parse_rate(text);
      if (!r) return r.error();
      values.rates[name] = *r;
      return std::nullopt;
    }
    case Kind::kCount: {
      auto c = core::parse_count(text, name);
      if (!c) return c.error();
      if (*c > kMaxCount) return name + " '" + std::string(text) + "' is too large";
      values.counts[name] = *c;
      return std::nullopt;
    }
    case Kind::kDuration: {
      auto d = core::parse_duration(text);
      if (!d) return d.error();
      values.durations[name] = *d;
      return std::nullopt;
    }
    case Kind::kDecimal: {
      auto d = parse_decimal(text, name);
      if (!d) return d.error();
      values.decimals[name] = *d;
      return std::nullopt;
    }
    case Kind::kText:
      values.texts[name] = std::string(text);
      return std::nullopt;
    case Kind::kFlag: {
      if (text != "0" && text != "1")
        return name + " must be 1 (on) or 0 (off), got '" + std::string(text) + "'";
      values.counts[name] = text == "1" ? 1 : 0;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& row : table()) names.emplace_back(row.name);
  return names;
}

Expected<LimitSpec> parse_limit_spec(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const AlgorithmRow* row = nullptr;
  for (const auto& r : table()) {
    if (r.name == name) row = &r;
  }
  if (row == nullptr) {
    std::string accepted;
    for (const auto& n : algorithm_names()) accepted += (accepted.empty() ? "" : ", ") + n;
    return make_error("unknown algorithm '" + std::string(name) + "' (accepted: " + accepted + ")");
  }
  const std::string algo(row->name);
  Values values;
  std::map<std::string, std::string, std::less<>> written;
  if (colon != std::string_view::npos) {
    std::string_view rest = text.substr(colon + 1);
    while (true) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      const auto eq = item.find('=');
      if (item.empty() || eq == std::string_view::npos || eq == 0) {
        return make_error(algo + ": '" + std::string(item) +
                          "' is not param=value (accepted parameters: " + join_names(row->params) +
                          ")");
      }
      const std::string key(item.substr(0, eq));
      const std::string_view value = item.substr(eq + 1);
      const Param* param = nullptr;
      for (const auto& p : row->params) {
        if (p.name == key) param = &p;
      }
      if (param == nullptr) {
        return make_error(algo + ": unknown parameter '" + key +
                          "' (accepted: " + join_names(row->params) + ")");
      }
      if (written.contains(key)) {
        return make_error(algo + ": parameter '" + key + "' given twice");
      }
      if (value.empty()) return make_error(algo + ": parameter '" + key + "' has no value");
      if (auto err = parse_value(*param, value, values)) {
        return make_error(algo + ": bad value for '" + key + "': " + *err);
      }
      written[key] = std::string(value);
      values.given[key] = true;
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  std::string canonical = algo;
  char sep = ':';
  // Like every canonical text it must parse again (the Redis backend and the engine's inline
  // limits do), so of a flag and the parameter it overrides it names only the one in force.
  std::vector<std::string_view> unnamed;
  for (const auto& p : row->params) {
    if (p.overrides.empty()) continue;
    const auto w = written.find(p.name);
    unnamed.push_back(w != written.end() && w->second == "1" ? p.overrides : p.name);
  }
  for (const auto& p : row->params) {
    const auto w = written.find(p.name);
    if (w == written.end()) {
      if (!p.default_value) {
        return make_error(algo + ": missing parameter '" + std::string(p.name) +
                          "' (required: " + join_names(row->params, true) + ")");
      }
      parse_value(p, *p.default_value, values);
    }
    if (std::find(unnamed.begin(), unnamed.end(), p.name) != unnamed.end()) continue;
    if (p.quiet && w == written.end()) continue;
    const std::string value = w != written.end() ? w->second : std::string(*p.default_value);
    canonical += sep + std::string(p.name) + "=" + value;
    sep = ',';
  }
  auto params = row->build(values);
  if (!params) return make_error(params.error());
  return LimitSpec{algo, *params, row->wait, canonical};
}

}  // namespace sluice::spec
