// RemoteLimit (sluice/backend/redis/remote_limit.hpp): naming, the fallback's scaled spec.
#include "sluice/backend/redis/remote_limit.hpp"

#include <algorithm>
#include <cmath>

#include "client/sha1.hpp"
#include "sluice/core/rate.hpp"

namespace sluice::backend::redis {

std::string_view failure_policy_name(FailurePolicy p) {
  switch (p) {
    case FailurePolicy::kOpen:
      return "fail-open";
    case FailurePolicy::kClosed:
      return "fail-closed";
    case FailurePolicy::kLocal:
      return "local";
  }
  return "?";
}

core::Expected<FailurePolicy> parse_failure_policy(std::string_view text) {
  if (text == "fail-open") return FailurePolicy::kOpen;
  if (text == "fail-closed") return FailurePolicy::kClosed;
  if (text == "local") return FailurePolicy::kLocal;
  return core::make_error("'" + std::string(text) +
                          "' is not a failure policy (accepted: fail-open, fail-closed, local)");
}

namespace {

std::int64_t scale_count(std::int64_t n, double share) {
  if (n == 0) return 0;
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(n) * share));
}

}  // namespace

core::Expected<spec::LimitSpec> scaled_spec(const spec::LimitSpec& spec, double share) {
  if (!(share > 0 && share <= 1)) {
    return core::make_error("local share must be in (0, 1], got " + std::to_string(share));
  }
  // The canonical text lists every parameter: rewrite rate, burst and limit and parse again,
  // so each algorithm derives its own representation from the scaled values.
  const std::string& c = spec.canonical;
  const auto colon = c.find(':');
  std::string out = c.substr(0, colon + 1);
  std::string_view rest = std::string_view(c).substr(colon + 1);
  char sep = 0;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    std::string scaled(value);
    if (name == "rate") {
      auto r = core::parse_rate(value);
      if (!r) return core::make_error(r.error());
      // x share as count*1000*share per 1000 periods keeps three decimals of the share.
      const core::Rate s{
          std::max<std::int64_t>(1, std::llround(static_cast<double>(r->count) * share * 1000.0)),
          core::saturating_mul(r->period, 1000)};
      scaled = core::format_rate(s);
    } else if (name == "burst" || name == "limit") {
      auto n = core::parse_count(value, name);
      if (!n) return core::make_error(n.error());
      scaled = std::to_string(scale_count(*n, share));
    }
    if (sep != 0) out.push_back(sep);
    out.append(name).push_back('=');
    out += scaled;
    sep = ',';
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return spec::parse_limit_spec(out);
}

core::Expected<std::shared_ptr<const RemoteLimit>> RemoteLimit::make(
    std::string name, spec::LimitSpec spec, RemoteLimitOptions options,
    const spec::LimitSpec* replaced) {
  if (options.lease < 0) return core::make_error("lease must be 0 (exact) or a permit count");
  if (options.count_denied && options.lease > 0) {
    return core::make_error(
        "count_denied: a leased limit refuses from permits taken ahead, which cannot charge "
        "Redis for a refusal; use lease: 0 (exact)");
  }
  if (options.block > 0 && options.lease > 0) {
    return core::make_error(
        "on_deny: a leased limit refuses from permits taken ahead, which cannot block the key "
        "in Redis; use lease: 0 (exact)");
  }
  if (options.lease > 0) {
    const auto& a = spec.algorithm;
    // leaky-bucket's grants carry nginx's delay, which permits spent later cannot honour.
    if (a != "token-bucket" && a != "gcra" && a != "fixed-window" && a != "sliding-window" &&
        a != "sliding-log") {
      return core::make_error("lease: " + a +
                              " cannot lease permits (it queues or delays requests); leasing "
                              "applies to token-bucket, gcra and the windows");
    }
  }
  std::shared_ptr<RemoteLimit> out(new RemoteLimit());
  if (options.on_failure == FailurePolicy::kLocal) {
    auto scaled = scaled_spec(spec, options.local_share);
    if (!scaled) return core::make_error("local fallback: " + scaled.error());
    auto table = local::make_table_limit(*scaled, options.fallback_memory);
    if (!table) return core::make_error("local fallback: " + table.error());
    out->fallback_ = std::make_unique<local::Policy>(local::Combine::kAllMustPass,
                                                     std::vector<local::TableLimit>{*table});
  }
  out->name_ = std::move(name);
  out->script_ = script_limit(spec, options.concurrency_lease_ttl);
  if (options.on_change == OnChange::kReset) {
    out->key_suffix_ = ":" + detail::sha1_hex(spec.canonical).substr(0, 8);
  }
  if (options.on_change == OnChange::kProportional) {
    out->script_.proportional = true;
    if (replaced != nullptr && replaced->algorithm == spec.algorithm) {
      out->script_.replaced = script_limit(*replaced, options.concurrency_lease_ttl).params;
    }
  }
  out->script_.count_denied = options.count_denied;
  // Whole milliseconds, at least one (PX): a block is a wait the client is told in seconds.
  if (options.block > 0) {
    out->script_.block_ms = std::max<std::int64_t>(1, options.block / core::kNanosPerMilli);
  }
  out->spec_ = std::move(spec);
  out->options_ = options;
  return std::shared_ptr<const RemoteLimit>(std::move(out));
}

std::string RemoteLimit::state_key(std::string_view key) const {
  std::string out;
  state_key_into(out, key);
  return out;
}

void RemoteLimit::state_key_into(std::string& out, std::string_view key) const {
  out.clear();
  out.reserve(12 + name_.size() + key.size() + spec_.algorithm.size() + key_suffix_.size());
  out.append("sluice:{").append(name_).push_back(':');
  out.append(key).append("}:");
  // Another algorithm's state would not parse: a rule that changes algorithm starts afresh.
  out.append(spec_.algorithm);
  out.append(key_suffix_);
}

const core::Calendar* RemoteLimit::calendar() const {
  const auto* p = std::get_if<core::FixedWindow::Params>(&spec_.params);
  return p != nullptr ? p->calendar : nullptr;
}

}  // namespace sluice::backend::redis
