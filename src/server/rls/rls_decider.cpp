// Decider (rls_decider.hpp): resolving each descriptor's limit, deciding the enforced ones as one
// request and the shadow ones alone, and reporting each limit's own decision.
#include "rls_decider.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace sluice::server::rls {
namespace {

constexpr std::uint32_t kMaxRemaining = std::numeric_limits<std::uint32_t>::max();

Status status_of(const Limit& limit, const core::Decision& d) {
  Status s;
  // A shadow-mode limit reports its numbers but never refuses (envoyproxy/ratelimit: OK).
  s.code = d.allowed || limit.shadow_mode ? Code::kOk : Code::kOverLimit;
  s.limit = CurrentLimit{limit.config.requests_per_unit, limit.config.unit, limit.config.name};
  s.remaining = static_cast<std::uint32_t>(
      std::clamp<std::int64_t>(d.remaining, 0, static_cast<std::int64_t>(kMaxRemaining)));
  // envoyproxy/ratelimit reports whole seconds (unit - now % unit over Unix seconds); the
  // ceiling of Sluice's nanosecond reset gives the same number for its windows.
  s.reset_seconds = core::ceil_seconds(d.reset_after);
  return s;
}

struct Pending {
  std::size_t index;  // of the request descriptor
  const Limit* limit;
  std::string key;
};

}  // namespace

std::string limit_key(std::string_view domain, std::span<const Entry> entries) {
  std::string key;
  auto put = [&key](std::string_view s) {
    key += std::to_string(s.size());
    key += ':';
    key += s;
  };
  put(domain);
  for (const auto& e : entries) {
    put(e.key);
    put(e.value);
  }
  return key;
}

Decider::Decider(const RlsConfig& config) : memory_per_limit_(config.memory_per_limit) {
  for (const auto& d : config.domains) {
    auto tree = DescriptorTree::build(d, config.memory_per_limit);
    if (!tree) {
      throw std::invalid_argument(d.file + ": domain '" + d.name + "': " + tree.error());
    }
    domains_.insert_or_assign(d.name, std::move(tree).value());
  }
}

Decider::~Decider() = default;

const Limit* Decider::override_limit(const Override& o, std::size_t index, Answer& out) {
  if (o.unit < static_cast<int>(RlsUnit::kSecond) || o.unit > static_cast<int>(RlsUnit::kDay)) {
    out.invalid = "descriptor " + std::to_string(index) + ": limit override unit " +
                  std::to_string(o.unit) + " is not SECOND (1), MINUTE (2), HOUR (3) or DAY (4)";
    return nullptr;
  }
  const std::pair<std::uint32_t, int> shape{o.requests_per_unit, o.unit};
  {
    std::shared_lock lock(overrides_mutex_);
    if (auto it = overrides_.find(shape); it != overrides_.end()) return it->second.get();
  }
  std::unique_lock lock(overrides_mutex_);
  if (auto it = overrides_.find(shape); it != overrides_.end()) return it->second.get();
  if (overrides_.size() >= kMaxOverrides) {
    out.exhausted = "more than " + std::to_string(kMaxOverrides) +
                    " distinct limit overrides; configure the limits in the service instead";
    return nullptr;
  }
  RlsRateLimit config;
  config.requests_per_unit = o.requests_per_unit;
  config.unit = static_cast<RlsUnit>(o.unit);
  auto limit = make_limit(config, false, memory_per_limit_);
  if (!limit) {
    out.exhausted = "limit override: " + limit.error();
    return nullptr;
  }
  return overrides_.emplace(shape, std::move(limit).value()).first->second.get();
}

Answer Decider::decide(const Request& request, core::Nanos now) {
  Answer out;
  // envoyproxy/ratelimit's two checks, with its messages.
  if (request.domain.empty()) {
    out.invalid = "rate limit domain must not be empty";
    return out;
  }
  if (request.descriptors.empty()) {
    out.invalid = "rate limit descriptor list must not be empty";
    return out;
  }
  out.statuses.resize(request.descriptors.size());
  const auto domain = domains_.find(request.domain);
  if (domain == domains_.end()) return out;  // unknown domain: no limit applies anywhere

  // Resolve every descriptor first, so a malformed one leaves nothing charged.
  std::vector<const Limit*> limits(request.descriptors.size(), nullptr);
  for (std::size_t i = 0; i < request.descriptors.size(); ++i) {
    const DescriptorView& d = request.descriptors[i];
    if (d.limit) {  // the client's limit replaces the configured one, as in envoyproxy/ratelimit
      limits[i] = override_limit(*d.limit, i, out);
      if (!out.invalid.empty() || !out.exhausted.empty()) {
        out.statuses.clear();
        return out;
      }
    } else {
      limits[i] = domain->second.match(d.entries);
    }
  }

  const std::int64_t cost = request.hits_addend == 0 ? 1 : request.hits_addend;
  std::vector<Pending> enforced;
  for (std::size_t i = 0; i < limits.size(); ++i) {
    const Limit* limit = limits[i];
    if (limit == nullptr) continue;  // OK, no current limit
    if (limit->config.unlimited) {
      out.statuses[i].remaining = kMaxRemaining;
      continue;
    }
    Pending p{i, limit, limit_key(request.domain, request.descriptors[i].entries)};
    if (limit->shadow_mode) {
      const std::string_view key = p.key;
      const auto d = limit->alone->decide(std::span(&key, 1), now, cost, core::Nanos{0});
      out.statuses[i] = status_of(*limit, d.decision);
    } else {
      enforced.push_back(std::move(p));
    }
  }

  // A policy lists each table once: descriptors that reach the same limit twice are decided in
  // later rounds, each round all or none.
  std::vector<bool> done(enforced.size(), false);
  for (std::size_t first = 0; first < enforced.size();) {
    std::vector<std::size_t> round;
    for (std::size_t j = first; j < enforced.size(); ++j) {
      if (done[j]) continue;
      const bool taken = std::any_of(round.begin(), round.end(), [&](std::size_t k) {
        return enforced[k].limit == enforced[j].limit;
      });
      if (taken) continue;
      round.push_back(j);
      done[j] = true;
    }
    std::vector<std::string_view> keys;
    for (std::size_t k : round) keys.push_back(enforced[k].key);
    local::PolicyDecision decided;
    if (round.size() == 1) {
      decided = enforced[round[0]].limit->alone->decide(keys, now, cost, core::Nanos{0});
    } else {
      std::vector<local::TableLimit> tables;
      for (std::size_t k : round) tables.push_back(*enforced[k].limit->table);
      local::Policy together(local::Combine::kAllMustPass, std::move(tables));
      decided = together.decide(keys, now, cost, core::Nanos{0});
    }
    for (std::size_t r = 0; r < round.size(); ++r) {
      const Pending& p = enforced[round[r]];
      // Each limit's own decision; the combined one if the policy could not give them.
      const bool own = decided.each.size() == round.size() && decided.each[r].has_value();
      out.statuses[p.index] = status_of(*p.limit, own ? *decided.each[r] : decided.decision);
      if (out.statuses[p.index].code == Code::kOverLimit) out.overall = Code::kOverLimit;
    }
    while (first < enforced.size() && done[first]) ++first;
  }
  return out;
}

}  // namespace sluice::server::rls
