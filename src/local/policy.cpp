// Policy (sluice/local/policy.hpp): locking several tables' slots together, deciding, and
// committing all or none.
#include "sluice/local/policy.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <variant>

#include "sluice/core/denied_charge.hpp"
#include "sluice/local/combined_decision.hpp"

namespace sluice::local {
namespace {

// One limit's slot held while the policy decides, with its decided step.
template <class A>
struct Held {
  using Table = table::KeyedTable<A>;
  using StepT = decltype(A::decide(std::declval<const typename A::Params&>(),
                                   std::declval<const typename A::State&>(), core::Nanos{},
                                   std::int64_t{}, core::Nanos{}));
  typename Table::Locked locked;
  StepT step;
  const TablePtr<A>* table;
  table::KeyHash key;

  void commit() { core::commit<A>(locked.params(), locked.state(), step); }
  void charge_denied(std::int64_t cost) {
    if constexpr (core::CountsDenials<A>) {
      locked.state() =
          core::DeniedCharge<A>::charge(locked.params(), locked.state(), locked.now(), cost);
    }
  }
};

template <class T>
struct HeldFor;
template <class... A>
struct HeldFor<std::variant<TablePtr<A>...>> {
  using type = std::variant<Held<A>...>;
};
using AnyHeld = HeldFor<AnyTable>::type;

// Locks the key's slot in `table` (waiting its turn) and decides; nullopt only when the key is
// new and its bucket is full of leases.
std::optional<AnyHeld> hold(const AnyTable& any, const table::KeyHash& h, core::Nanos now,
                            std::int64_t cost, core::Nanos max_wait) {
  return std::visit(
      [&](const auto& t) -> std::optional<AnyHeld> {
        using A = typename std::decay_t<decltype(*t)>::Algorithm;
        auto locked = t->lock(h, now);
        if (!locked) return std::nullopt;
        auto step = A::decide(locked->params(), locked->state(), locked->now(), cost, max_wait);
        return AnyHeld(std::in_place_type<Held<A>>, Held<A>{std::move(*locked), step, &t, h});
      },
      any);
}

// The order every request locks tables in: by address, so no two requests wait on each other
// in a cycle.
const void* table_identity(const AnyTable& any) {
  return std::visit([](const auto& t) -> const void* { return t.get(); }, any);
}

std::int64_t cost_of(const LimitAsk& ask, std::int64_t cost) {
  return ask.cost > 0 ? ask.cost : cost;
}

// A key whose bucket holds only leases cannot get a slot: its limit is full of work.
core::Decision table_full() { return core::denied(0, 0, 0, -1); }

const core::Decision& decision_of(const AnyHeld& h) {
  return std::visit([](const auto& x) -> const core::Decision& { return x.step.decision; }, h);
}

bool commits_on_denial(const AnyHeld& h) {
  return std::visit([](const auto& x) { return x.step.commit_on_denial; }, h);
}

// Commits a held step; a concurrency limit's commit becomes a lease.
void commit(AnyHeld& h, std::int64_t cost, Leases& leases) {
  std::visit(
      [&](auto& x) {
        x.commit();
        using A = typename std::decay_t<decltype(*x.table->get())>::Algorithm;
        if constexpr (std::is_same_v<A, core::Concurrency>) {
          leases.emplace_back(*x.table, x.key, cost);
        }
      },
      h);
}

}  // namespace

void Lease::release() {
  if (!table_) return;
  auto table = std::move(table_);
  if (auto l = table->lock(key_, 0)) l->state() = core::Concurrency::release(l->state(), cost_);
}

core::Decision decide_all(std::span<const LimitAsk> asks, core::Nanos now, std::int64_t cost,
                          std::span<EachDecision> each, Leases& leases) {
  absl::InlinedVector<std::uint32_t, kInline> order;
  for (std::uint32_t i = 0; i < asks.size(); ++i) {
    each[i].reset();
    if (!asks[i].skip) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::less<const void*>()(table_identity(*asks[a].table), table_identity(*asks[b].table));
  });
  // Phase one: hold every slot and decide.
  absl::InlinedVector<AnyHeld, kInline> held;
  absl::InlinedVector<bool, kInline> counts_denied;
  absl::InlinedVector<std::int64_t, kInline> costs;
  AllMustPass total;
  for (const std::uint32_t i : order) {
    const std::int64_t c = cost_of(asks[i], cost);
    auto h = hold(*asks[i].table, asks[i].key, now + asks[i].shift, c, asks[i].max_wait);
    each[i] = h ? decision_of(*h) : table_full();
    total.add(*each[i]);
    if (!h) continue;
    held.push_back(std::move(*h));
    counts_denied.push_back(asks[i].count_denied);
    costs.push_back(c);
  }
  // Phase two: commit all or none. A single limit may change its state on a denial as its
  // reference does (x/time/rate's cancelled reservation).
  const bool single_denial_commit =
      order.size() == 1 && held.size() == 1 && commits_on_denial(held.front());
  const core::Decision decision = total.result();
  if (decision.allowed || single_denial_commit) {
    const std::size_t before = leases.size();
    for (std::size_t k = 0; k < held.size(); ++k) commit(held[k], costs[k], leases);
    if (!decision.allowed)
      leases.erase(leases.begin() + static_cast<std::ptrdiff_t>(before), leases.end());
  } else {
    // Refused: the limits that count refusals are charged all the same.
    for (std::size_t k = 0; k < held.size(); ++k) {
      if (counts_denied[k]) std::visit([&](auto& x) { x.charge_denied(costs[k]); }, held[k]);
    }
  }
  return decision;  // the slots unlock as `held` goes out of scope
}

core::Decision decide_first(std::span<const LimitAsk> asks, core::Nanos now, std::int64_t cost,
                            std::span<EachDecision> each, Leases& leases, int& decided_by) {
  decided_by = -1;
  core::Decision out{false, 0, -1, 0, 0, -1};
  core::Nanos soonest = core::kNever;
  bool any = false;
  for (std::size_t i = 0; i < asks.size(); ++i) {
    each[i].reset();
    if (asks[i].skip || decided_by >= 0) continue;
    const std::int64_t c = cost_of(asks[i], cost);
    auto h = hold(*asks[i].table, asks[i].key, now + asks[i].shift, c, asks[i].max_wait);
    const core::Decision d = h ? decision_of(*h) : table_full();
    each[i] = d;
    if (d.allowed) {
      commit(*h, c, leases);
      decided_by = static_cast<int>(i);
      out = d;
      continue;
    }
    // The earliest time any of them would allow is when the request could pass.
    if (d.retry_after != core::kNever && (soonest == core::kNever || d.retry_after < soonest)) {
      soonest = d.retry_after;
    }
    if (!any) out = d;
    any = true;
  }
  if (decided_by >= 0) return out;
  out.allowed = false;
  out.delay = 0;
  out.retry_after = soonest;
  return out;
}

Policy::Policy(Combine combine, std::vector<TableLimit> limits)
    : combine_(combine), limits_(std::move(limits)) {
  for (std::size_t i = 0; i < limits_.size(); ++i) {
    for (std::size_t j = i + 1; j < limits_.size(); ++j) {
      if (limits_[i].table == limits_[j].table) {
        throw std::invalid_argument("a policy cannot list the same limit twice");
      }
    }
  }
}

PolicyDecision Policy::decide(std::span<const std::string_view> keys, core::Nanos now,
                              std::int64_t cost, core::Nanos max_wait) {
  absl::InlinedVector<core::Nanos, kInline> waits(limits_.size(), max_wait);
  return decide(keys, now, cost, waits);
}

PolicyDecision Policy::decide(std::span<const std::string_view> keys, core::Nanos now,
                              std::int64_t cost, std::span<const core::Nanos> max_waits) {
  if (keys.size() != limits_.size() || max_waits.size() != limits_.size()) {
    throw std::invalid_argument("policy: one key and one max-wait per limit expected");
  }
  absl::InlinedVector<LimitAsk, kInline> asks(limits_.size());
  for (std::size_t i = 0; i < limits_.size(); ++i) {
    asks[i].table = &limits_[i].table;
    asks[i].skip = keys[i].empty();
    if (!asks[i].skip) asks[i].key = table::hash_key(keys[i]);
    asks[i].max_wait = max_waits[i];
  }
  PolicyDecision out;
  out.each.resize(limits_.size());
  out.decision = combine_ == Combine::kAllMustPass
                     ? decide_all(asks, now, cost, out.each, out.leases)
                     : decide_first(asks, now, cost, out.each, out.leases, out.decided_by);
  return out;
}

}  // namespace sluice::local
