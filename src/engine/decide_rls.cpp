// The Envoy rate limit service's decision (engine.hpp): each descriptor matched in its domain's
// tree (or its own override limit), the enforced ones decided together, all or none, the
// shadow-mode ones alone; here, or in Redis with `rls: {storage: redis}`.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "engine_state.hpp"
#include "internal.hpp"
#include "rls_tree.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine::detail {
namespace {

// A descriptor's state key: the domain and every entry, length-prefixed, so that no two
// descriptors share a key whatever bytes their values hold (envoyproxy/ratelimit joins them
// with '_' and '.', where `a_b=c` and `a=b_c` can collide).
template <class F>
void key_pieces(std::string_view domain, std::span<const RlsEntry> entries, F&& put) {
  auto one = [&](std::string_view s) {
    put(std::string_view(fmt::format_int(s.size()).c_str()));
    put(":");
    put(s);
  };
  one(domain);
  for (const RlsEntry& e : entries) {
    one(e.key);
    one(e.value);
  }
}

table::KeyHash key_hash(std::string_view domain, std::span<const RlsEntry> entries) {
  table::KeyHasher h;
  key_pieces(domain, entries, [&](std::string_view s) { h.add(s); });
  return h.finish();
}

std::string key_text(std::string_view domain, std::span<const RlsEntry> entries) {
  std::string out;
  key_pieces(domain, entries, [&](std::string_view s) { out.append(s); });
  return out;
}

struct LimitKeyHash {
  std::size_t operator()(const std::pair<const CompiledLimit*, std::string>& p) const {
    return std::hash<std::string>{}(p.second) ^ std::hash<const CompiledLimit*>{}(p.first);
  }
};

// rounds[j]: how many of order[0..j) reach the same limit as order[j], which is the round
// order[j] is decided in. One pass: a hash map by limit, or a scan while there are few.
absl::InlinedVector<std::uint32_t, kInlineLimits> rounds_of(std::span<const std::size_t> order,
                                                            const Outcome& out) {
  absl::InlinedVector<std::uint32_t, kInlineLimits> rounds(order.size(), 0);
  auto limit = [&](std::size_t j) { return &compiled_of(out.applied[order[j]]); };
  if (order.size() <= kInlineLimits) {
    for (std::size_t j = 0; j < order.size(); ++j) {
      for (std::size_t k = 0; k < j; ++k) rounds[j] += limit(k) == limit(j) ? 1 : 0;
    }
    return rounds;
  }
  std::unordered_map<const CompiledLimit*, std::uint32_t> seen;
  for (std::size_t j = 0; j < order.size(); ++j) rounds[j] = seen[limit(j)]++;
  return rounds;
}

// The enforced descriptors decided in rounds, each round all or none over distinct limits (a
// limit's table appears once in a decision): round r holds the r-th descriptor of each limit,
// in request order, so the same limit reached twice is decided after. Linear in the
// descriptors (a counting sort by round), not a rescan of those left per round.
void decide_local_enforced(std::span<const std::size_t> order, std::span<const table::KeyHash> keys,
                           std::int64_t cost, core::Nanos now, Outcome& out) {
  const auto rounds = rounds_of(order, out);
  std::size_t count = 0;
  for (const std::uint32_t r : rounds) count = std::max<std::size_t>(count, r + 1);
  // by_round[starts[r] .. starts[r + 1]): the indexes into `order` of round r, in order.
  absl::InlinedVector<std::size_t, local::kInline> starts(count + 1, 0);
  for (const std::uint32_t r : rounds) ++starts[r + 1];
  for (std::size_t r = 0; r < count; ++r) starts[r + 1] += starts[r];
  absl::InlinedVector<std::size_t, local::kInline> by_round(order.size());
  absl::InlinedVector<std::size_t, local::kInline> next(starts.begin(), starts.end() - 1);
  for (std::size_t j = 0; j < order.size(); ++j) by_round[next[rounds[j]]++] = j;
  for (std::size_t r = 0; r < count; ++r) {
    const std::span<const std::size_t> round(by_round.data() + starts[r],
                                             starts[r + 1] - starts[r]);
    absl::InlinedVector<local::LimitAsk, local::kInline> asks;
    for (std::size_t k : round) {
      asks.push_back({&compiled_of(out.applied[order[k]]).table->table, keys[order[k]], 0, false});
    }
    absl::InlinedVector<local::EachDecision, local::kInline> each(asks.size());
    local::decide_all(asks, now, cost, each, leases_of(out));
    for (std::size_t i = 0; i < round.size(); ++i) {
      if (each[i]) out.applied[order[round[i]]].decision = *each[i];
    }
  }
}

// The descriptors' limits kept in Redis as one ask in out.remote: part 0 the enforced ones
// (all or none), then one part per shadow-mode one. False when none of them counts anything.
bool start_rls_remote(const RlsAsk& a, std::int64_t cost, core::Nanos now, Outcome& out) {
  std::unique_ptr<Remote, RemoteDeleter> remote = take_remote(out);
  remote->kind = AskKind::kRls;
  remote->now = now;
  remote->add_part();  // part 0: the enforced descriptors, all or none
  remote->parts.front().query.cost = cost;
  // The enforced (limit, key) pairs asked so far, to the `applied` index that asks each.
  std::unordered_map<std::pair<const CompiledLimit*, std::string>, std::size_t, LimitKeyHash> asked;
  for (std::size_t k = 0; k < out.applied.size(); ++k) {
    Applied& ap = out.applied[k];
    if (ap.limit.unlimited) continue;  // answers OK, counts nothing
    const CompiledLimit& limit = compiled_of(ap);
    std::string key = key_text(a.domain, a.descriptors[ap.item].entries);
    RemotePart* part = &remote->parts.front();
    if (ap.enforced) {
      // The same limit and key twice in one request: asked once, reported twice.
      const auto [first, added] = asked.try_emplace(std::pair(&limit, key), k);
      if (!added) {
        remote->copies.emplace_back(k, first->second);
        continue;
      }
    } else {
      part = &remote->add_part();
      part->enforced = false;
      part->query.cost = cost;
    }
    part->applied.push_back(k);
    part->query.items.push_back(remote_item(limit, std::move(key), 0, now));
  }
  std::erase_if(remote->parts, [](const RemotePart& p) { return p.applied.empty(); });
  if (remote->parts.empty()) return false;
  remote_of(out) = std::move(remote);
  return true;
}

}  // namespace

void conclude_rls(Outcome& out) {
  out.verdict = Verdict::kAllow;
  for (std::size_t i = 0; i < out.applied.size(); ++i) {
    const Applied& a = out.applied[i];
    if (!a.limit.unlimited) {
      count_decision(*compiled_of(a).rls->counters, a.decision.allowed, a.enforced, 0);
    }
    if (!a.enforced || a.decision.allowed) continue;
    out.verdict = Verdict::kDeny;
    if (out.decided_by < 0) out.decided_by = static_cast<int>(i);
  }
}

// A descriptor's own limit: a fixed window of its numbers, in a table (or Redis form) for that
// (requests, unit) pair, made with the RLS limits' placement: `rls.memory`, or in Redis with
// `rls.on_failure` (then `redis.on_failure`) and the rest, as configured RLS limits are.
const CompiledLimit* EngineState::rls_override(const Snapshot& snap, const RlsOverride& o,
                                               std::size_t index, Outcome& out) {
  if (o.unit < static_cast<int>(config::RlsUnit::kSecond) ||
      o.unit > static_cast<int>(config::RlsUnit::kDay)) {
    refuse(out, ErrorKind::kBadDescriptor,
           "descriptor " + std::to_string(index) + ": limit override unit " +
               std::to_string(o.unit) + " is not SECOND (1), MINUTE (2), HOUR (3) or DAY (4)");
    return nullptr;
  }
  const bool redis = snap.rls != nullptr && snap.rls->redis;
  const std::string id =
      fmt::format("override:{}/{}:{}", o.requests_per_unit, o.unit, redis ? "redis" : "local");
  config::RlsRateLimit rate;
  rate.requests_per_unit = o.requests_per_unit;
  rate.unit = static_cast<config::RlsUnit>(o.unit);
  const auto got = rls_overrides_.get(id, [&]() -> core::Expected<CompiledLimit> {
    auto spec = config::rls_limit_spec(rate);
    if (!spec) return core::make_error(spec.error());
    Placement where{snap.rules.rls ? snap.rules.rls->memory : config::RlsSettings{}.memory,
                    std::nullopt, "rls"};
    if (redis) where.redis = remote_options(snap.rules.rls_redis_options());
    auto limit = make_limit(id, *spec, where, nullptr, 0);
    if (!limit) return limit;
    CompiledLimit made = std::move(limit).value();
    made.rls = CompiledLimit::Rls{rate, false};
    return made;
  });
  if (got.limit == nullptr) {
    refuse(out, ErrorKind::kExhausted,
           got.miss == LazyLimits::Miss::kFull
               ? "more than " + std::to_string(Engine::kMaxRlsOverrides) +
                     " distinct limit overrides; configure the limits in the service instead"
               : "limit override: " + got.error);
  }
  return got.limit;
}

bool EngineState::resolve_rls(const Snapshot& snap, const RlsAsk& a, Outcome& out) {
  // envoyproxy/ratelimit's two checks, with its messages.
  if (a.domain.empty()) {
    refuse(out, ErrorKind::kBadDomain, "rate limit domain must not be empty");
    return false;
  }
  if (a.descriptors.empty()) {
    refuse(out, ErrorKind::kBadDescriptor, "rate limit descriptor list must not be empty");
    return false;
  }
  const std::int64_t most =
      snap.rules.rls ? snap.rules.rls->max_descriptors : config::RlsSettings{}.max_descriptors;
  if (std::cmp_greater(a.descriptors.size(), most)) {
    refuse(out, ErrorKind::kTooManyDescriptors,
           fmt::format("{} descriptors in one request, more than rls.max_descriptors ({})",
                       a.descriptors.size(), most));
    return false;
  }
  out.verdict = Verdict::kAllow;
  const RlsTree* tree = nullptr;
  if (snap.rls) {
    if (auto it = snap.rls->domains.find(a.domain); it != snap.rls->domains.end()) {
      tree = &it->second;
    }
  }
  if (tree == nullptr) return false;  // an unknown domain: no limit applies anywhere
  // Resolve every descriptor first, so a malformed one leaves nothing charged.
  for (std::size_t i = 0; i < a.descriptors.size(); ++i) {
    const RlsDescriptorView& d = a.descriptors[i];
    const CompiledLimit* limit =
        d.limit ? rls_override(snap, *d.limit, i, out) : tree->match(d.entries);
    if (out.verdict == Verdict::kInvalid) {
      out.applied.clear();
      return false;
    }
    if (limit == nullptr) continue;  // OK, no current limit
    out.applied.push_back(applied(*limit, nullptr, core::Decision{true, 0, -1, 0, 0, -1},
                                  !limit->rls || !limit->rls->shadow, nullptr,
                                  static_cast<std::uint32_t>(i)));
  }
  return true;
}

Progress EngineState::start_rls(const Snapshot& snap, const RlsAsk& a, core::Nanos now,
                                Outcome& out) {
  if (!resolve_rls(snap, a, out)) return Progress::kDone;
  const std::int64_t cost = a.hits_addend == 0 ? 1 : a.hits_addend;
  if (snap.rls->redis) {
    if (start_rls_remote(a, cost, now, out)) return Progress::kPending;
    conclude_rls(out);
    return Progress::kDone;
  }
  absl::InlinedVector<table::KeyHash, kInlineLimits> keys(out.applied.size());
  absl::InlinedVector<std::size_t, kInlineLimits> enforced;
  for (std::size_t k = 0; k < out.applied.size(); ++k) {
    Applied& ap = out.applied[k];
    if (ap.limit.unlimited) continue;  // answers OK, counts nothing
    keys[k] = key_hash(a.domain, a.descriptors[ap.item].entries);
    if (ap.enforced) {
      enforced.push_back(k);
      continue;
    }
    // Shadow mode: decided on its own, never stopping the enforced ones from being charged.
    local::LimitAsk ask{&compiled_of(ap).table->table, keys[k], 0, false};
    local::EachDecision each;
    ap.decision = local::decide_all({&ask, 1}, now, cost, {&each, 1}, leases_of(out));
  }
  decide_local_enforced(enforced, keys, cost, now, out);
  conclude_rls(out);
  return Progress::kDone;
}

}  // namespace sluice::engine::detail
