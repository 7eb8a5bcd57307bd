// A route's `breaker:` and `stale_cache:` read and written (breaker_yaml.hpp).
#include "breaker_yaml.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>

#include "sluice/core/byte_size.hpp"

namespace sluice::config::internal {
namespace {

using core::Nanos;

constexpr std::int64_t kMaxCount = 1'000'000'000;
constexpr std::int64_t kMaxProbes = 1000;
// The window is cut in core::Breaker::kBuckets buckets: a bucket of at least 10 ms.
constexpr Nanos kMinWindow = 100 * core::kNanosPerMilli;
constexpr std::size_t kMinStaleEntry = 1024;

core::Expected<double> parse_ratio(const std::string& t) {
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v > 0 && v <= 1)) {
    return core::make_error("expected a ratio above 0 and at most 1 (e.g. 0.5), got " + quoted(t));
  }
  return v;
}

bool header_name_ok(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// The table of `errors:` words; a three-digit status stands for itself.
struct ErrorWord {
  std::string_view word;
  bool BreakerErrors::*flag;
};
constexpr ErrorWord kErrorWords[] = {{"5xx", &BreakerErrors::any_5xx},
                                     {"4xx", &BreakerErrors::any_4xx},
                                     {"timeout", &BreakerErrors::timeout},
                                     {"unreachable", &BreakerErrors::unreachable}};

void read_errors(Section& s, BreakerErrors& out) {
  auto items = s.list("errors");
  if (!items) return;
  out = BreakerErrors{false, false, {}, false, false};
  for (const Item& item : *items) {
    const auto word = std::find_if(std::begin(kErrorWords), std::end(kErrorWords),
                                   [&](const ErrorWord& w) { return w.word == item.text; });
    if (word != std::end(kErrorWords)) {
      out.*(word->flag) = true;
      continue;
    }
    const auto n = core::parse_count(item.text, "status");
    if (item.text.size() == 3 && n && *n >= 400 && *n <= 599) {
      out.statuses.push_back(static_cast<int>(*n));
      continue;
    }
    s.fail(item.path, item.line,
           quoted(item.text) +
               " is not a kind of failure (accepted: 5xx, 4xx, timeout, unreachable, or a "
               "status from 400 to 599)");
  }
  if (items->empty()) s.fail("errors", "is empty: nothing would count as a failure");
}

void read_fallback(Section& s, BreakerFallback& out) {
  if (s.text_is("fallback", "stale")) {
    out.stale = true;
    return;
  }
  if (!s.has("fallback")) return;
  if (!s.is_map("fallback")) {
    s.fail("fallback", "expected stale or a mapping {status, body, headers, stale}");
    return;
  }
  auto f = s.section("fallback", {"status", "body", "headers", "stale"});
  if (!f) return;
  if (auto st = f->number("status", 200, 599)) out.status = static_cast<int>(*st);
  if (auto body = f->text("body")) out.body = *body;
  if (auto stale = f->flag("stale")) out.stale = *stale;
}

// `fallback.headers` is a mapping of any names: read it here, not through Section's list of
// accepted fields.
void read_fallback_headers(const yaml::Node& route, Section& s, BreakerFallback& out) {
  const auto breaker = route.find("breaker");
  if (!breaker || !breaker->is_map()) return;
  const auto fallback = breaker->find("fallback");
  if (!fallback || !fallback->is_map()) return;
  const auto headers = fallback->find("headers");
  if (!headers || headers->is_null()) return;
  if (!headers->is_map()) {
    s.fail("fallback.headers", "expected a mapping of header names to values");
    return;
  }
  for (std::size_t i = 0; i < headers->size(); ++i) {
    const std::string name(headers->key(i).scalar());
    const yaml::Node value = headers->value(i);
    const std::string path = "fallback.headers." + name;
    if (!header_name_ok(name)) {
      s.fail(path, headers->key(i).line(), quoted(name) + " is not a header name");
    } else if (!value.is_scalar() || value.scalar().find_first_of("\r\n") != std::string::npos ||
               core::invalid_utf8_at(value.scalar())) {
      s.fail(path, value.line(), "expected a one-line text value");
    } else {
      out.headers.emplace_back(name, std::string(value.scalar()));
    }
  }
}

// What needs another field: one threshold at least, slow_call with slow_ratio, stale_for with
// a stale fallback.
void check_together(Section& s, const BreakerConfig& b, bool fields_ok) {
  const core::Breaker::Params& p = b.params;
  if (!fields_ok) return;
  if (p.error_ratio == 0 && p.slow_ratio == 0 && p.error_count == 0) {
    s.fail("error_ratio",
           "a breaker needs what trips it: error_ratio, slow_ratio (with slow_call) or "
           "error_count, e.g. error_ratio: 0.5");
  }
  if (p.slow_ratio > 0 && p.slow_call == 0) {
    s.fail("slow_ratio", "needs slow_call: the duration over which a call is slow (e.g. 500ms)");
  }
  if (p.slow_call > 0 && p.slow_ratio == 0) {
    s.fail("slow_call", "trips nothing without slow_ratio (e.g. slow_ratio: 0.5)");
  }
  if (b.fallback.stale && b.fallback.stale_for == 0) {
    s.fail("stale_for", "fallback: stale needs stale_for: how old a kept response may be served");
  }
  if (!b.fallback.stale && b.fallback.stale_for > 0) {
    s.fail("stale_for", "applies with fallback: stale only");
  }
}

}  // namespace

std::optional<BreakerConfig> read_breaker(Section& route, const yaml::Node& node, bool proxies) {
  if (!route.has("breaker")) return std::nullopt;
  if (!proxies) {
    route.fail("breaker",
               "applies to a route that proxies (upstream); this one answers itself: remove it");
    return std::nullopt;
  }
  auto s = route.section(
      "breaker", {"error_ratio", "slow_ratio", "slow_call", "error_count", "window", "min_requests",
                  "open_for", "probes", "errors", "fallback", "stale_for"});
  if (!s) return std::nullopt;
  BreakerConfig b;
  core::Breaker::Params& p = b.params;
  bool ok = true;
  const auto take = [&ok](auto got, auto& into) {
    if (got) {
      into = static_cast<std::remove_reference_t<decltype(into)>>(*got);
    } else {
      ok = false;
    }
  };
  for (auto [field, out] :
       {std::pair{"error_ratio", &p.error_ratio}, std::pair{"slow_ratio", &p.slow_ratio}}) {
    if (s->has(field)) take(s->parsed<double>(field, parse_ratio), *out);
  }
  if (s->has("error_count")) take(s->number("error_count", 1, kMaxCount), p.error_count);
  if (s->has("min_requests")) take(s->number("min_requests", 1, kMaxCount), p.min_requests);
  if (s->has("probes")) take(s->number("probes", 1, kMaxProbes), p.probes);
  for (auto [field, out] :
       {std::pair{"slow_call", &p.slow_call}, std::pair{"open_for", &p.open_for},
        std::pair{"stale_for", &b.fallback.stale_for}}) {
    if (s->has(field)) take(s->duration(field), *out);
  }
  if (s->has("window")) {
    const auto w = s->duration("window");
    if (w && *w < kMinWindow) {
      s->fail("window", "at least 100ms (it is counted in 10 buckets)");
      ok = false;
    } else {
      take(w, p.window);
    }
  }
  read_errors(*s, b.errors);
  read_fallback(*s, b.fallback);
  read_fallback_headers(node, *s, b.fallback);
  check_together(*s, b, ok);
  return b;
}

void read_stale_cache(Section& top, StaleCacheLimits& out) {
  auto s = top.section("stale_cache", {"max_bytes", "max_entry"});
  if (!s) return;
  if (auto m = s->parsed<std::size_t>("max_bytes", core::parse_bytes)) out.max_bytes = *m;
  if (auto m = s->parsed<std::size_t>("max_entry", core::parse_bytes)) {
    if (*m < kMinStaleEntry) {
      s->fail("max_entry", "at least 1KiB (a response's head alone takes some)");
    } else {
      out.max_entry = *m;
    }
  }
  if (out.max_entry > out.max_bytes) {
    s->fail("max_entry", core::format_bytes(out.max_entry) + " is more than max_bytes (" +
                             core::format_bytes(out.max_bytes) + ")");
  }
}

void emit_breaker(YAML::Emitter& out, const BreakerConfig& b) {
  const core::Breaker::Params& p = b.params;
  out << YAML::Key << "breaker" << YAML::Value << YAML::BeginMap;
  for (auto [field, value] :
       {std::pair{"error_ratio", p.error_ratio}, std::pair{"slow_ratio", p.slow_ratio}}) {
    if (value > 0) out << YAML::Key << field << YAML::Value << value;
  }
  if (p.slow_call > 0) {
    out << YAML::Key << "slow_call" << YAML::Value << core::format_duration(p.slow_call);
  }
  if (p.error_count > 0) out << YAML::Key << "error_count" << YAML::Value << p.error_count;
  out << YAML::Key << "window" << YAML::Value << core::format_duration(p.window);
  out << YAML::Key << "min_requests" << YAML::Value << p.min_requests;
  out << YAML::Key << "open_for" << YAML::Value << core::format_duration(p.open_for);
  out << YAML::Key << "probes" << YAML::Value << p.probes;
  out << YAML::Key << "errors" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const ErrorWord& w : kErrorWords) {
    if (b.errors.*(w.flag)) out << std::string(w.word);
  }
  for (int status : b.errors.statuses) out << status;
  out << YAML::EndSeq;
  const BreakerFallback& f = b.fallback;
  out << YAML::Key << "fallback" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "status" << YAML::Value << f.status;
  out << YAML::Key << "body" << YAML::Value << YAML::DoubleQuoted << f.body;
  if (!f.headers.empty()) {
    out << YAML::Key << "headers" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, value] : f.headers) {
      out << YAML::Key << name << YAML::Value << YAML::DoubleQuoted << value;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "stale" << YAML::Value << f.stale;
  out << YAML::EndMap;
  if (f.stale_for > 0) {
    out << YAML::Key << "stale_for" << YAML::Value << core::format_duration(f.stale_for);
  }
  out << YAML::EndMap;
}

void emit_stale_cache(YAML::Emitter& out, const StaleCacheLimits& limits) {
  if (limits == StaleCacheLimits{}) return;
  out << YAML::Key << "stale_cache" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "max_bytes" << YAML::Value << core::format_bytes(limits.max_bytes);
  out << YAML::Key << "max_entry" << YAML::Value << core::format_bytes(limits.max_entry);
  out << YAML::EndMap;
}

}  // namespace sluice::config::internal
