// A rule's tiers and overrides (readers.hpp): the limits it applies instead of its own, chosen by
// a request attribute (`tier`, `tiers`) or by the key (`overrides`), read and checked here.
#include "readers.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::config::internal {
namespace {

constexpr std::string_view kVariantExample = "e.g. gcra:rate=100/s,burst=50";

std::vector<LimitVariant> read_variants(Section& s, std::string_view field, std::string_view what) {
  std::vector<LimitVariant> out;
  for (Entry& e : s.entries(field, what)) {
    const std::string path = std::string(field) + "." + e.name;
    if (core::invalid_utf8_at(e.name)) {
      s.fail(field, e.line, core::invalid_utf8_problem(e.name));
      continue;
    }
    if (!e.node.is_scalar()) {
      s.fail(path, e.line,
             "expected a limit (" + std::string(kVariantExample) + "), got " + describe(e.node));
      continue;
    }
    auto spec = spec::parse_limit_spec(e.node.scalar());
    if (!spec) {
      s.fail(path, e.line, spec.error());
      continue;
    }
    out.push_back({e.name, std::string(e.node.scalar()), *spec, e.line});
  }
  return out;
}

// The algorithms whose state on_change: proportional can rescale (core/rescale.hpp).
constexpr std::string_view kRescalable[] = {"gcra", "token-bucket", "leaky-bucket", "fixed-window",
                                            "sliding-window"};

void check_on_change(const Rule& r, const Origin& o, Errors& errors) {
  if (r.on_change == OnChange::kKeep || !o.ok("on_change")) return;
  auto fail = [&](const std::string& problem) {
    errors.add(o.at("on_change"), "rule " + quoted(r.name) + ": field 'on_change': " + problem);
  };
  const std::string& a = r.limit.algorithm;
  if (r.limit.wait == spec::WaitSupport::kNotTimeBased) {
    fail(
        "a concurrency limit counts requests in flight, which a change cannot forget or "
        "rescale; use on_change: keep");
  } else if (r.on_change == OnChange::kProportional &&
             std::find(std::begin(kRescalable), std::end(kRescalable), a) ==
                 std::end(kRescalable)) {
    fail(
        "proportional rescales gcra, token-bucket, leaky-bucket, fixed-window and "
        "sliding-window, not " +
        a + "; use keep or reset");
  }
}

}  // namespace

void read_limit_variants(Section& s, Rule& r, Origin& origin) {
  r.tiers = read_variants(s, "tiers", "tier");
  r.overrides = read_variants(s, "overrides", "override");
  if (auto c = s.choice("on_change", kOnChanges)) r.on_change = *c;
  if (!s.has("tiers")) return;
  if (s.has("limit")) {
    s.fail("limit", "a rule with tiers takes its limit from tiers.default; remove limit");
    return;
  }
  const auto dflt = std::find_if(r.tiers.begin(), r.tiers.end(),
                                 [](const LimitVariant& v) { return v.name == kDefaultTier; });
  if (dflt == r.tiers.end()) {
    // Unlimited or refused would be a guess; a request with no tier or an unknown one (an
    // untrusted client's header is not read) must still be limited.
    s.fail("tiers",
           "needs a 'default' tier, the limit of requests whose tier is missing or unknown "
           "(e.g. tiers: {default: gcra:rate=10/s,burst=5, pro: gcra:rate=100/s,burst=50})");
    origin.mark_bad("limit");
    return;
  }
  r.limit_text = dflt->limit_text;
  r.limit = dflt->limit;
}

void check_limit_variants(const Rule& r, const Origin& o, Errors& errors) {
  auto fail = [&](std::string_view field, int line, const std::string& problem) {
    errors.add(line > 0 ? line : o.at(field),
               "rule " + quoted(r.name) + ": field " + quoted(field) + ": " + problem);
  };
  // The model alone says it: a RuleSet made without a file (the engine's, a test's) is checked too.
  if (r.tier && r.tiers.empty() && o.ok("tiers")) {
    fail("tier", 0, "needs tiers: {default: LIMIT, NAME: LIMIT, ...}, the limit of each tier");
  }
  if (!r.tier && !r.tiers.empty() && o.ok("tier")) {
    fail("tiers", 0,
         "needs tier: the request attribute that names the tier (e.g. tier: header:X-Plan)");
  }
  if (!o.ok("limit") || r.limit_text.empty()) return;
  check_on_change(r, o, errors);
  for (const auto* list : {&r.tiers, &r.overrides, &r.shared_overrides}) {
    const std::string_view field = list == &r.tiers ? "tiers" : "overrides";
    for (const LimitVariant& v : *list) {
      if (v.limit.algorithm == r.limit.algorithm) continue;  // the default tier among them
      fail(field, v.line,
           quoted(v.name) + " is " + v.limit.algorithm + " but the rule's " +
               (r.tier ? "default tier" : "limit") + " is " + r.limit.algorithm +
               ": every tier and override of a rule uses the same algorithm (other numbers)");
    }
  }
}

}  // namespace sluice::config::internal
