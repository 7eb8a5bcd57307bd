// Engine (engine.hpp): applying configs, the one entry point's dispatch over the kinds of ask,
// completing an outcome with Redis's answer, inline limits and the decision service's permits.
#include "sluice/engine/engine.hpp"

#include <stdexcept>
#include <variant>

#include "internal.hpp"
#include "lease_book.hpp"
#include "sluice/backend/redis/store.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/local/combined_decision.hpp"

namespace sluice::engine {

namespace detail {

void RemoteDeleter::operator()(Remote* r) const { delete r; }

std::vector<backend::redis::Answer> answer_without_store(const Remote& remote) {
  std::vector<backend::redis::Answer> answers;
  for (const RemotePart& part : remote.parts) {
    answers.push_back(backend::redis::answer_without_store(part.query, remote.now));
  }
  return answers;
}

backend::redis::QueryItem remote_item(const CompiledLimit& limit, std::string key,
                                      core::Nanos max_wait) {
  return backend::redis::QueryItem{limit.remote, std::move(key), max_wait};
}

}  // namespace detail

Outcome::~Outcome() = default;

void Outcome::reset() {
  verdict = Verdict::kAllow;
  total = core::Decision{true, 0, -1, 0, 0, -1};
  delay = 0;
  applied.clear();
  decided_by = -1;
  missing_key = false;
  route = nullptr;
  status = 0;
  body = {};
  error.clear();
  error_field = {};
  lease_token.clear();
  lease_ttl = 0;
  leases.clear();
  remote.reset();
  client_ = CanonicalAddress();
  snapshot.reset();
}

bool Outcome::dry_run_denied() const {
  for (const Applied& a : applied) {
    if (!a.enforced && !a.decision.allowed) return true;
  }
  return false;
}

namespace {

constexpr std::size_t kThrottleMemory = 64u << 20;  // CL.THROTTLE's table: 16 B a key

std::size_t throttle_memory(const config::RuleSet& rules) {
  return rules.resp ? rules.resp->memory : kThrottleMemory;
}

}  // namespace

Engine::Engine(config::RuleSet rules, core::Nanos now)
    : throttle_(std::make_unique<table::KeyedTable<core::Gcra>>(
          core::Gcra::make(core::Rate{1, core::kNanosPerSecond}, 0), throttle_memory(rules))),
      leases_(std::make_unique<detail::LeaseBook>()) {
  const auto errors = apply(std::move(rules), now);
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += e + "\n";
    throw std::invalid_argument(all);
  }
}

Engine::~Engine() = default;

std::vector<std::string> Engine::apply(config::RuleSet rules, core::Nanos now) {
  std::vector<std::string> errors;
  for (const auto& e : config::validate(rules, "")) errors.push_back(e.format());
  if (!errors.empty()) return errors;
  return apply_validated(std::move(rules), now);
}

std::vector<std::string> Engine::apply_validated(config::RuleSet rules, core::Nanos now) {
  std::lock_guard lock(apply_mutex_);
  const std::shared_ptr<const Snapshot> old = snapshot();
  auto snap = detail::compile(std::move(rules), old.get(), now);
  if (!snap) return {snap.error()};
  current_.exchange(std::move(snap).value());
  // After the swap: a loop that sees the new version reads the new snapshot.
  version_.fetch_add(1, std::memory_order_acq_rel);
  return {};  // `old` is freed here, outside the slot's lock, unless an ask in flight holds it
}

Progress Engine::start(std::shared_ptr<const Snapshot> snap, const Ask& ask, core::Nanos now,
                       Outcome& out) {
  out.reset();
  out.snapshot = std::move(snap);
  const Snapshot& s = *out.snapshot;
  return std::visit(
      [&](const auto& a) -> Progress {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, RequestView>) {
          return detail::start_http(a, now, out);
        } else if constexpr (std::is_same_v<A, RuleAsk>) {
          const CompiledRule* rule = s.rule(a.rule);
          if (rule == nullptr) {
            out.verdict = Verdict::kInvalid;
            out.error = "unknown rule '" + std::string(a.rule) + "'";
            out.error_field = "rule";
            return Progress::kDone;
          }
          const Progress p =
              detail::start_one(rule->limit, &rule->rule, rule->check_counters.get(), a.key, a.cost,
                                rule->max_wait(), now, detail::AskKind::kRule, out);
          if (p == Progress::kDone) detail::conclude_check(out, now, *leases_);
          return p;
        } else if constexpr (std::is_same_v<A, InlineAsk>) {
          const CompiledLimit* limit = inline_limit(a.limit, s.rules.memory, out);
          if (limit == nullptr) return Progress::kDone;
          const core::Nanos wait =
              limit->spec.wait == spec::WaitSupport::kRejectOnly ? 0 : a.max_wait;
          detail::start_one(*limit, nullptr, nullptr, a.key, a.cost, wait, now,
                            detail::AskKind::kInline, out);
          detail::conclude_check(out, now, *leases_);
          return Progress::kDone;
        } else if constexpr (std::is_same_v<A, ThrottleAsk>) {
          return start_throttle(s, a, now, out);
        } else {
          return start_rls(s, a, now, out);
        }
      },
      ask);
}

void Engine::finish(Outcome& out, std::vector<backend::redis::Answer> answers) {
  detail::Remote& remote = *out.remote;
  const core::Nanos now = remote.now;
  local::AllMustPass total;
  total.add(remote.local);
  for (std::size_t p = 0; p < remote.parts.size() && p < answers.size(); ++p) {
    const detail::RemotePart& part = remote.parts[p];
    backend::redis::Answer& answer = answers[p];
    for (std::size_t k = 0; k < part.applied.size() && k < answer.each.size(); ++k) {
      out.applied[part.applied[k]].decision = answer.each[k];
    }
    if (part.enforced) total.add(answer.combined);
    for (auto& lease : answer.leases) remote.leases.push_back(std::move(lease));
  }
  for (const auto& [copy, original] : remote.copies) {
    out.applied[copy].decision = out.applied[original].decision;
  }
  out.total = total.result();
  switch (remote.kind) {
    case detail::AskKind::kHttp:
      detail::conclude_http(out);
      break;
    case detail::AskKind::kRule:
    case detail::AskKind::kInline:
      detail::conclude_check(out, now, *leases_);
      break;
    case detail::AskKind::kRls:
      detail::conclude_rls(out);
      break;
    case detail::AskKind::kThrottle:
      out.verdict = out.total.allowed ? Verdict::kAllow : Verdict::kDeny;
      if (out.total.overflow) {
        out.verdict = Verdict::kInvalid;
        out.error = "ERR invalid quantity: too large for this rate";
        out.error_field = "quantity";
      }
      break;
  }
}

void Engine::decide(const Ask& ask, core::Nanos now, Outcome& out) {
  if (start(snapshot(), ask, now, out) == Progress::kDone) return;
  finish(out, detail::answer_without_store(*out.remote));
}

const CompiledLimit* Engine::inline_limit(std::string_view text, std::size_t memory, Outcome& out) {
  auto spec = spec::parse_limit_spec(text);
  if (!spec) {
    out.verdict = Verdict::kInvalid;
    out.error = spec.error();
    out.error_field = "limit";
    return nullptr;
  }
  std::lock_guard guard(inline_mutex_);
  if (auto it = inline_.find(spec->canonical); it != inline_.end()) return it->second.get();
  if (inline_.size() >= kMaxInlineLimits) {
    out.verdict = Verdict::kInvalid;
    out.error = "too many distinct inline limits (at most " + std::to_string(kMaxInlineLimits) +
                "); configure rules instead";
    out.error_field = "limit";
    return nullptr;
  }
  auto table = local::make_table_limit(*spec, std::min<std::size_t>(memory, 16u << 20));
  if (!table) {
    out.verdict = Verdict::kInvalid;
    out.error = table.error();
    out.error_field = "limit";
    return nullptr;
  }
  auto limit = std::make_unique<CompiledLimit>();
  limit->name = spec->canonical;
  limit->spec = *spec;
  limit->quota = quota_of(*spec);
  limit->table = *table;
  return inline_.emplace(spec->canonical, std::move(limit)).first->second.get();
}

bool Engine::release_lease(std::string_view token) { return leases_->release(token); }

void Engine::expire_leases(core::Nanos now) { leases_->expire(now); }

}  // namespace sluice::engine
