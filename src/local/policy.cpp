// Policy (sluice/local/policy.hpp): locking several tables' slots together, deciding, and
// committing all or none.
#include "sluice/local/policy.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <thread>
#include <variant>

#include "sluice/local/combined_decision.hpp"

namespace sluice::local {
namespace {

// Give up after this many rounds of finding a slot held (or a bucket full of leases).
constexpr int kMaxAttempts = 1000;

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
};

template <class T>
struct HeldFor;
template <class... A>
struct HeldFor<std::variant<TablePtr<A>...>> {
  using type = std::variant<Held<A>...>;
};
using AnyHeld = HeldFor<AnyTable>::type;

// Locks the key's slot in `table` and decides; nullopt when the slot is held elsewhere.
std::optional<AnyHeld> hold(const AnyTable& any, std::string_view key, core::Nanos now,
                            std::int64_t cost, core::Nanos max_wait, bool wait) {
  return std::visit(
      [&](const auto& t) -> std::optional<AnyHeld> {
        using A = typename std::decay_t<decltype(*t)>::Algorithm;
        const table::KeyHash h = table::hash_key(key);
        auto locked = wait ? t->lock(h, now) : t->try_lock(h, now);
        if (!locked) return std::nullopt;
        auto step = A::decide(locked->params(), locked->state(), now, cost, max_wait);
        return AnyHeld(std::in_place_type<Held<A>>, Held<A>{std::move(*locked), step, &t, h});
      },
      any);
}

const core::Decision& decision_of(const AnyHeld& h) {
  return std::visit([](const auto& x) -> const core::Decision& { return x.step.decision; }, h);
}

bool commits_on_denial(const AnyHeld& h) {
  return std::visit([](const auto& x) { return x.step.commit_on_denial; }, h);
}

// Commits a held step; a concurrency limit's commit becomes a lease.
void commit(AnyHeld& h, std::int64_t cost, std::vector<Lease>& leases) {
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
  constexpr std::size_t kInline = 8;
  if (limits_.size() <= kInline) {
    core::Nanos waits[kInline];
    std::fill(waits, waits + limits_.size(), max_wait);
    return decide(keys, now, cost, std::span<const core::Nanos>(waits, limits_.size()));
  }
  const std::vector<core::Nanos> waits(limits_.size(), max_wait);
  return decide(keys, now, cost, waits);
}

PolicyDecision Policy::decide(std::span<const std::string_view> keys, core::Nanos now,
                              std::int64_t cost, std::span<const core::Nanos> max_waits) {
  if (keys.size() != limits_.size() || max_waits.size() != limits_.size()) {
    throw std::invalid_argument("policy: one key and one max-wait per limit expected");
  }
  return combine_ == Combine::kAllMustPass ? all_must_pass(keys, now, cost, max_waits)
                                           : first_that_allows(keys, now, cost, max_waits);
}

PolicyDecision Policy::all_must_pass(std::span<const std::string_view> keys, core::Nanos now,
                                     std::int64_t cost, std::span<const core::Nanos> max_waits) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::yield();
    // Phase one: hold every slot and decide. A slot held elsewhere: let go of all, retry,
    // so two requests locking the same slots in different orders cannot deadlock.
    std::vector<AnyHeld> held;
    std::vector<std::size_t> index;  // limit index of each held slot
    held.reserve(limits_.size());
    index.reserve(limits_.size());
    bool busy = false;
    for (std::size_t i = 0; i < limits_.size() && !busy; ++i) {
      if (keys[i].empty()) continue;
      auto h = hold(limits_[i].table, keys[i], now, cost, max_waits[i], limits_.size() == 1);
      if (!h) {
        busy = true;
      } else {
        held.push_back(std::move(*h));
        index.push_back(i);
      }
    }
    if (busy) continue;
    AllMustPass total;
    PolicyDecision out;
    out.each.resize(limits_.size());
    for (std::size_t j = 0; j < held.size(); ++j) {
      total.add(decision_of(held[j]));
      out.each[index[j]] = decision_of(held[j]);
    }
    // Phase two: commit all or none. A single limit may change its state on a denial as its
    // reference does (x/time/rate's cancelled reservation).
    const bool single_denial_commit = held.size() == 1 && commits_on_denial(held.front());
    if (total.allowed() || single_denial_commit) {
      for (auto& h : held) commit(h, cost, out.leases);
    }
    out.decision = total.result();
    if (!out.decision.allowed) out.leases.clear();
    return out;  // slots unlock as `held` goes out of scope
  }
  PolicyDecision out;
  out.decision = core::denied(0, 0, 0, -1);
  return out;
}

PolicyDecision Policy::first_that_allows(std::span<const std::string_view> keys, core::Nanos now,
                                         std::int64_t cost,
                                         std::span<const core::Nanos> max_waits) {
  PolicyDecision out;
  out.each.resize(limits_.size());
  core::Nanos soonest = core::kNever;
  bool any = false;
  for (std::size_t i = 0; i < limits_.size(); ++i) {
    if (keys[i].empty()) continue;
    auto h = hold(limits_[i].table, keys[i], now, cost, max_waits[i], true);
    if (!h) continue;
    const core::Decision d = decision_of(*h);
    out.each[i] = d;
    if (d.allowed) {
      commit(*h, cost, out.leases);
      out.decision = d;
      out.decided_by = static_cast<int>(i);
      return out;
    }
    // The earliest time any of them would allow is when the request could pass.
    if (d.retry_after != core::kNever && (soonest == core::kNever || d.retry_after < soonest)) {
      soonest = d.retry_after;
    }
    if (!any) out.decision = d;
    any = true;
  }
  out.decision.allowed = false;
  out.decision.delay = 0;
  out.decision.retry_after = soonest;
  return out;
}

}  // namespace sluice::local
