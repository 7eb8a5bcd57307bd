// Reading the Envoy rate limit service's domains (sluice/config/rls.hpp) with the same field
// reader as the main config: envoyproxy/ratelimit's documents, whether in their own files or
// in the main config's `rls.domains`. envoyproxy/ratelimit stops at the first problem and
// names only the file; this reports every problem at its line, and refuses what it would read
// differently (unknown fields, units a fixed window cannot hold, a (key, value) given twice).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

#include "internal.hpp"
#include "readers.hpp"
#include "section.hpp"
#include "sluice/core/byte_size.hpp"

namespace sluice::config {

using internal::Errors;
using internal::Origin;
using internal::quoted;
using internal::Section;

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

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Fields envoyproxy/ratelimit has that Sluice refuses rather than read differently.
void refuse_unsupported(Section& s, std::initializer_list<std::string_view> fields) {
  for (const auto f : fields) {
    if (s.has(f)) s.fail(f, "(envoyproxy/ratelimit) is not supported by Sluice");
  }
}

std::optional<std::uint32_t> requests_per_unit(Section& r) {
  auto t = r.text("requests_per_unit");
  if (!t) return std::nullopt;
  const bool digits =
      !t->empty() && t->size() <= 10 &&
      std::all_of(t->begin(), t->end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoull(*t) > 0xffffffffull) {
    r.fail("requests_per_unit",
           "must be a whole number from 0 to 4294967295 (a uint32 in the "
           "RLS protocol), not " +
               quoted(*t));
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(std::stoull(*t));
}

std::optional<RlsRateLimit> rate_limit(Section& d) {
  auto r = d.section("rate_limit",
                     {"unit", "requests_per_unit", "unlimited", "name", "algorithm", "replaces"});
  if (!r) return std::nullopt;
  refuse_unsupported(*r, {"replaces"});
  RlsRateLimit out;
  if (auto u = r->flag("unlimited")) out.unlimited = *u;
  if (auto name = r->text("name")) out.name = *name;
  if (out.unlimited) {
    for (std::string_view f : {"unit", "requests_per_unit", "algorithm"}) {
      if (r->has(f)) r->fail(f, "an unlimited rate_limit takes no " + quoted(f));
    }
    return out;
  }
  if (!r->has("unit")) {
    d.fail("rate_limit", "rate_limit has no 'unit' (second, minute, hour or day)");
  } else if (auto u = r->text("unit")) {
    const std::string name = lower(*u);
    const auto row = std::find_if(std::begin(kUnits), std::end(kUnits),
                                  [&](const UnitRow& r2) { return r2.name == name; });
    if (row == std::end(kUnits)) {
      r->fail("unit", quoted(*u) + " is not one of second, minute, hour, day" +
                          (name == "month" || name == "year"
                               ? " (a calendar month or year has no fixed length for a window)"
                               : ""));
    } else {
      out.unit = row->unit;
    }
  }
  if (!r->has("requests_per_unit")) {
    d.fail("rate_limit", "rate_limit has no 'requests_per_unit' (0 refuses every request)");
  } else if (auto n = requests_per_unit(*r)) {
    out.requests_per_unit = *n;
  }
  if (auto a = r->text("algorithm")) out.algorithm = *a;
  if (auto spec = rls_limit_spec(out); !spec) {
    r->fail(r->has("algorithm") ? "algorithm" : "requests_per_unit", spec.error());
  }
  return out;
}

std::vector<RlsDescriptor> descriptors(Section& s, const std::string& prefix, Errors& errors,
                                       Origin& origin);

std::optional<RlsDescriptor> descriptor(const yaml::Node& node, const std::string& prefix,
                                        Errors& errors, Origin& origin) {
  RlsDescriptor out;
  out.line = internal::line_of(node);
  if (auto k = node.find("key"); k && k->is_scalar()) out.key = k->scalar();
  if (auto v = node.find("value"); v && v->is_scalar()) out.value = v->scalar();
  const std::string here =
      prefix + "descriptor " + quoted(out.key + (out.value.empty() ? "" : "=" + out.value)) + ": ";
  const std::size_t before = errors.size();
  Section d(node, here, "", errors, origin,
            {"key", "value", "rate_limit", "descriptors", "shadow_mode", "detailed_metric",
             "value_to_metric", "share_threshold"});
  refuse_unsupported(d, {"share_threshold"});
  if (!d.has("key")) {
    errors.add(out.line, prefix + "descriptor has no 'key'");
  } else if (auto key = d.text("key"); key && key->empty()) {
    d.fail("key", "descriptor has an empty 'key'");
  }
  d.text("value");
  out.rate_limit = rate_limit(d);
  if (auto shadow = d.flag("shadow_mode")) out.shadow_mode = *shadow;
  // Statistics naming only in envoyproxy/ratelimit: read and checked, changes no decision.
  d.flag("detailed_metric");
  d.flag("value_to_metric");
  out.descriptors = descriptors(d, here, errors, origin);
  if (errors.size() != before) return std::nullopt;
  return out;
}

std::vector<RlsDescriptor> descriptors(Section& s, const std::string& prefix, Errors& errors,
                                       Origin& origin) {
  std::vector<RlsDescriptor> out;
  std::map<std::pair<std::string, std::string>, int> seen;  // (key, value) -> line
  for (const yaml::Node& item : s.sequence("descriptors")) {
    auto d = descriptor(item, prefix, errors, origin);
    if (!d) continue;
    auto [it, fresh] = seen.emplace(std::make_pair(d->key, d->value), d->line);
    if (!fresh) {
      errors.add(d->line, prefix + "descriptor " +
                              quoted(d->key + (d->value.empty() ? "" : "=" + d->value)) +
                              " given twice on this level (first at line " +
                              std::to_string(it->second) + ")");
      continue;
    }
    out.push_back(std::move(*d));
  }
  return out;
}

}  // namespace

std::optional<RlsDomain> internal::read_rls_domain(const yaml::Node& doc, Errors& errors) {
  if (doc.is_null()) return std::nullopt;  // an empty document (a trailing `---`) holds none
  Origin origin;
  RlsDomain out;
  out.line = line_of(doc);
  if (!doc.is_map()) {
    errors.add(out.line, "a domain is a mapping with 'domain' and 'descriptors'");
    return std::nullopt;
  }
  Section s(doc, "", "", errors, origin, {"domain", "descriptors"});
  if (!s.has("domain")) {
    errors.add(out.line,
               "missing field 'domain' (the name requests carry in RateLimitRequest.domain)");
  } else if (auto name = s.text("domain")) {
    if (name->empty()) s.fail("domain", "is empty");
    out.name = *name;
  }
  const std::string prefix = out.name.empty() ? "" : "domain " + quoted(out.name) + ": ";
  out.descriptors = descriptors(s, prefix, errors, origin);
  if (out.name.empty()) return std::nullopt;
  return out;
}

std::optional<RlsSettings> internal::read_rls(Section& top, Errors& errors) {
  auto r =
      top.section("rls", {"storage", "on_failure", "local_share", "lease", "lease_ttl", "memory",
                          "max_descriptors", "max_concurrent_streams", "files", "domains"});
  if (!r) return std::nullopt;
  RlsSettings rls;
  rls.line = top.line("rls");
  if (auto st = r->choice("storage", kStorages)) rls.storage = *st;
  const RedisOptionFields o = read_redis_options(*r);
  rls.on_failure = o.on_failure;
  rls.local_share = o.local_share;
  rls.lease = o.lease;
  rls.lease_ttl = o.lease_ttl;
  if (auto memory = r->parsed<std::size_t>("memory", core::parse_bytes)) {
    if (*memory < 1024) {
      r->fail("memory", "at least 1KiB is needed (one table bucket); the default is 16MiB");
    } else {
      rls.memory = *memory;
    }
  }
  // The most a gRPC message (4 MiB) can hold: an empty descriptor takes 2 bytes.
  if (auto n = r->number("max_descriptors", 1, 2 << 20)) rls.max_descriptors = *n;
  // gRPC's own range for the setting.
  if (auto n = r->number("max_concurrent_streams", 1, INT32_MAX)) rls.max_concurrent_streams = *n;
  if (auto files = r->list("files", true)) {
    for (const auto& f : *files) rls.files.push_back(f.text);
  }
  for (const yaml::Node& doc : r->sequence("domains")) {
    if (auto d = read_rls_domain(doc, errors)) rls.domains.push_back(std::move(*d));
  }
  return rls;
}

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

}  // namespace sluice::config
