// Engine (engine.hpp) and its state (engine_state.hpp): applying configs, the one dispatch over
// the kinds of ask (start, and finish once Redis has answered), inline limits.
#include "sluice/engine/engine.hpp"

#include <stdexcept>
#include <variant>

#include "engine_state.hpp"
#include "internal.hpp"
#include "keys.hpp"
#include "sluice/backend/redis/store.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/local/combined_decision.hpp"
#include "top_sketch.hpp"

namespace sluice::engine {

namespace detail {

void RemoteDeleter::operator()(Remote* r) const { delete r; }

void Remote::clear() {
  kind = AskKind::kHttp;
  for (RemotePart& p : parts) {
    p.query.items.clear();
    p.query.cost = 1;
    p.query.kind = backend::redis::RequestKind::kDecide;
    p.applied.clear();
    p.enforced = true;
    p.source = backend::redis::Source::kRedis;
    spare_.push_back(std::move(p));
  }
  parts.clear();
  local = core::Decision{};
  now = 0;
  copies.clear();
  leases.clear();
  holder.reset();  // as a dropped outcome's: the store releases what it still renews
  source = backend::redis::Source::kRedis;
  seen = false;
  for (backend::redis::Answer& a : answers) a.leases.clear();
  left = 0;
  started = 0;
}

std::vector<backend::redis::Answer> answer_without_store(const Remote& remote) {
  std::vector<backend::redis::Answer> answers;
  for (const RemotePart& part : remote.parts) {
    answers.push_back(backend::redis::answer_without_store(part.query, remote.now));
  }
  return answers;
}

backend::redis::QueryItem remote_item(const CompiledLimit& limit, std::string key,
                                      core::Nanos max_wait, core::Nanos now) {
  backend::redis::QueryItem item{limit.remote, std::move(key), max_wait};
  if (limit.remote->calendar() != nullptr) item.unix_now = now + limit.shift(now);
  return item;
}

namespace {

constexpr std::size_t kThrottleMemory = 64u << 20;  // CL.THROTTLE's table: 16 B a key
constexpr std::size_t kInlineMemory = 16u << 20;    // an inline limit's table at most

std::size_t throttle_memory(const config::RuleSet& rules) {
  return rules.resp ? rules.resp->memory : kThrottleMemory;
}

}  // namespace

// One row per kind of ask, in the Ask variant's order (AskKind follows it): how it starts, and
// how it concludes, at once or once Redis has answered. The one dispatch over ask kinds.
struct Kinds {
  using Start = Progress (*)(EngineState&, const Snapshot&, const Ask&, core::Nanos, Outcome&);
  using Conclude = void (*)(EngineState&, Outcome&, core::Nanos);
  struct Row {
    Start start;
    Conclude conclude;
  };

  template <class A>
  static const A& as(const Ask& a) {
    return *std::get_if<A>(&a);
  }
  static Progress http(EngineState&, const Snapshot&, const Ask& a, core::Nanos now, Outcome& out) {
    return start_http(as<RequestView>(a), now, out);
  }
  static Progress rule(EngineState& e, const Snapshot& s, const Ask& a, core::Nanos now,
                       Outcome& out) {
    return e.start_rule(s, as<RuleAsk>(a), now, out);
  }
  static Progress inline_limit(EngineState& e, const Snapshot& s, const Ask& a, core::Nanos now,
                               Outcome& out) {
    return e.start_inline(s, as<InlineAsk>(a), now, out);
  }
  static Progress throttle(EngineState& e, const Snapshot& s, const Ask& a, core::Nanos now,
                           Outcome& out) {
    return e.start_throttle(s, as<ThrottleAsk>(a), now, out);
  }
  static Progress rls(EngineState& e, const Snapshot& s, const Ask& a, core::Nanos now,
                      Outcome& out) {
    return e.start_rls(s, as<RlsAsk>(a), now, out);
  }
  static Progress key(EngineState&, const Snapshot& s, const Ask& a, core::Nanos now,
                      Outcome& out) {
    return start_key(s, as<KeyAsk>(a), now, out);
  }
  static void http_done(EngineState&, Outcome& out, core::Nanos now) { conclude_http(out, now); }
  static void check_done(EngineState& e, Outcome& out, core::Nanos now) {
    conclude_check(out, now, e.leases_);
  }
  static void throttle_done(EngineState& e, Outcome& out, core::Nanos) {
    conclude_throttle(out, e.throttle_counters_);
  }
  static void rls_done(EngineState&, Outcome& out, core::Nanos) { conclude_rls(out); }
  static void key_done(EngineState&, Outcome& out, core::Nanos) { conclude_key(out); }

  static constexpr Row kRows[] = {
      {http, http_done},         {rule, check_done}, {inline_limit, check_done},
      {throttle, throttle_done}, {rls, rls_done},    {key, key_done}};
  static_assert(std::size(kRows) == std::variant_size_v<Ask>);
  static_assert(static_cast<std::size_t>(AskKind::kKey) + 1 == std::size(kRows));
};

EngineState::EngineState(const config::RuleSet& rules, const core::Clock* wall)
    : wall_(wall),
      inline_(Engine::kMaxInlineLimits),
      throttle_remote_(Engine::kMaxInlineLimits),
      rls_overrides_(Engine::kMaxRlsOverrides),
      throttle_(core::Gcra::make(core::Rate{1, core::kNanosPerSecond}, 0), throttle_memory(rules)) {
}

std::vector<std::string> EngineState::apply(config::RuleSet rules, core::Nanos now) {
  std::lock_guard lock(apply_mutex_);
  const std::shared_ptr<const Snapshot> old = snapshot();
  auto snap = compile(std::move(rules), old.get(), now, wall_);
  if (!snap) return {snap.error()};
  current_.exchange(std::move(snap).value());
  // After the swap: a loop that sees the new version reads the new snapshot.
  version_.fetch_add(1, std::memory_order_acq_rel);
  return {};  // `old` is freed here, outside the slot's lock, unless an ask in flight holds it
}

Progress EngineState::start(std::shared_ptr<const Snapshot> snap, const Ask& ask, core::Nanos now,
                            Outcome& out) {
  out.reset();
  OutcomeAccess::snapshot(out) = std::move(snap);
  OutcomeAccess::asked_at(out) = now;
  return Kinds::kRows[ask.index()].start(*this, snapshot_of(out), ask, now, out);
}

Progress EngineState::start_rule(const Snapshot& s, const RuleAsk& a, core::Nanos now,
                                 Outcome& out) {
  const CompiledRule* rule = s.rule(a.rule);
  if (rule == nullptr) {
    refuse(out, ErrorKind::kUnknownRule, "unknown rule '" + std::string(a.rule) + "'");
    return Progress::kDone;
  }
  RuleCounters* counters = &(*rule->check_counters)[static_cast<std::size_t>(a.via)];
  const CompiledLimit& limit =
      rule->limit_for(a.key, a.tier.empty() ? std::nullopt : std::optional(a.tier));
  const Progress p = start_one(limit, &rule->rule, counters, a.key, a.cost, rule->max_wait(), now,
                               AskKind::kRule, out);
  if (p == Progress::kDone) conclude_check(out, now, leases_);
  return p;
}

Progress EngineState::start_inline(const Snapshot& s, const InlineAsk& a, core::Nanos now,
                                   Outcome& out) {
  auto spec = spec::parse_limit_spec(a.limit);
  if (!spec) {
    refuse(out, ErrorKind::kBadLimit, spec.error());
    return Progress::kDone;
  }
  const Placement where{std::min(s.rules.memory, kInlineMemory), std::nullopt, {}, wall_};
  const auto got = inline_.get(
      spec->canonical, [&] { return make_limit(spec->canonical, *spec, where, nullptr, now); });
  if (got.limit == nullptr) {
    refuse(out, ErrorKind::kBadLimit,
           got.miss == LazyLimits::Miss::kFull
               ? "too many distinct inline limits (at most " +
                     std::to_string(Engine::kMaxInlineLimits) + "); configure rules instead"
               : got.error);
    return Progress::kDone;
  }
  const core::Nanos wait = got.limit->spec.wait == spec::WaitSupport::kRejectOnly ? 0 : a.max_wait;
  start_one(*got.limit, nullptr, nullptr, a.key, a.cost, wait, now, AskKind::kInline, out);
  conclude_check(out, now, leases_);
  return Progress::kDone;
}

void EngineState::finish(Outcome& out, std::span<backend::redis::Answer> answers) {
  Remote& remote = *remote_of(out);
  const core::Nanos now = remote.now;
  // The local limits' decision goes in last: when there are none it is a placeholder (remaining
  // -1), which must not hide a Redis rule's own negative remaining (a key in debt).
  local::AllMustPass total;
  for (std::size_t p = 0; p < remote.parts.size() && p < answers.size(); ++p) {
    RemotePart& part = remote.parts[p];
    backend::redis::Answer& answer = answers[p];
    part.source = answer.source;
    // Redis did not answer this part: its fail-open limits admitted without counting.
    const bool redis_failed = answer.source == backend::redis::Source::kFailOpen ||
                              answer.source == backend::redis::Source::kFailClosed ||
                              answer.source == backend::redis::Source::kLocal;
    for (std::size_t k = 0; k < part.applied.size() && k < answer.each.size(); ++k) {
      Applied& a = out.applied[part.applied[k]];
      a.decision = answer.each[k];
      const auto& in_redis = compiled_of(a).remote;
      a.unmetered = redis_failed && in_redis != nullptr &&
                    in_redis->options().on_failure == backend::redis::FailurePolicy::kOpen;
    }
    if (part.enforced) total.add(answer.combined);
    remote.source = answer.source;
    remote.seen = answer.seen;
    for (auto& lease : answer.leases) remote.leases.push_back(std::move(lease));
  }
  for (const auto& [copy, original] : remote.copies) {
    out.applied[copy].decision = out.applied[original].decision;
  }
  total.add(remote.local);
  out.total = total.result();
  Kinds::kRows[static_cast<std::size_t>(remote.kind)].conclude(*this, out, now);
}

}  // namespace detail

Engine::Engine(config::RuleSet rules, core::Nanos now, const core::Clock* wall)
    : state_(std::make_unique<detail::EngineState>(rules, wall)) {
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
  return state_->apply(std::move(rules), now);
}

std::shared_ptr<const config::RuleSet> Engine::rules() const {
  auto snap = state_->snapshot();
  return std::shared_ptr<const config::RuleSet>(snap, &snap->rules);
}

std::uint64_t Engine::version() const { return state_->version(); }

void Engine::decide(const Ask& ask, core::Nanos now, Outcome& out) {
  if (state_->start(state_->snapshot(), ask, now, out) == Progress::kDone) return;
  auto answers = detail::answer_without_store(*detail::remote_of(out));
  state_->finish(out, answers);
}

bool Engine::release_lease(std::string_view token) { return state_->leases().release(token); }

void Engine::expire_leases(core::Nanos now) { state_->leases().expire(now); }

std::optional<TopKeys> Engine::top_keys(std::string_view rule, TopBy by, std::size_t n,
                                        core::Nanos now) const {
  const auto snap = state_->snapshot();
  const CompiledRule* r = snap->rule(rule);
  if (r == nullptr) return std::nullopt;
  TopKeys top;
  const detail::TopSlot* slot = r->limit.top.get();
  if (slot == nullptr) return top;
  top.refused = slot->refused();
  if (const detail::TopSketch* sketch = slot->get()) {
    top.keys = sketch->top(by, n, now, r->rule.log_key == config::LogKey::kHash);
  }
  return top;
}

void Engine::take_dry_run_denials(const std::function<void(const DryRunDenials&)>& f) {
  const auto snap = state_->snapshot();
  DryRunDenials d;
  for (const auto& c : snap->compiled) {
    if (!c->limit.dry_run_denials) continue;
    KeyTag latest;
    d.count = c->limit.dry_run_denials->take(latest, d.route);
    if (d.count == 0) continue;
    if (c->rule.log_key == config::LogKey::kHash) {
      detail::hash_hex(latest.hash, d.key);
    } else {
      d.key.assign(latest.text, latest.size);
    }
    d.rule = c->rule.name;
    f(d);
  }
}

TableUse Engine::throttle_use() const {
  const table::TableStats st = state_->throttle().stats();
  return TableUse{st.keys, st.capacity, st.evictions, st.memory_bytes};
}

}  // namespace sluice::engine
