// The engine's counters in the registry (engine.hpp): the decisions of every frontend by rule
// and outcome (one family: the gateway's by route, the check API's and SLUICE.CHECK's by rule,
// CL.THROTTLE's, the RLS limits'), each local table's occupancy, CL.THROTTLE's table, the
// decision service's held permits, each rule's memory.
#include <string>

#include "adaptive_gate.hpp"
#include "engine_state.hpp"
#include "rls_tree.hpp"
#include "route_breaker.hpp"
#include "sluice/engine/engine.hpp"
#include "top_sketch.hpp"

namespace sluice::engine {
namespace {

using metrics::Family;
using metrics::Kind;

constexpr Family kRequests{"sluice_rule_requests_total", Kind::kCounter,
                           "Decisions of a rule (or RLS limit), by frontend, gateway route and "
                           "outcome."};
constexpr Family kSettlements{"sluice_rule_settlements_total", Kind::kCounter,
                              "Gateway responses a rule's cost_from or count_if settled, by what "
                              "was charged."};
constexpr Family kSettlementsLost{
    "sluice_rule_settlements_lost_total", Kind::kCounter,
    "Settlements of a gateway rule kept in Redis that did not reach Redis (down, slow, its "
    "breaker open): what admission reserved stands for them."};
// The `frontend` label of the decision service's counters, by Via.
constexpr std::string_view kViaLabels[kVias] = {"check_api", "sluice_check"};

// Table occupancy, one row per figure: a table of rows rather than five copies of a loop.
struct TableFigure {
  Family family;
  double (*get)(const table::TableStats&);
};
constexpr TableFigure kTableFigures[] = {
    {{"sluice_limit_keys", Kind::kGauge, "Keys held in the rule's table."},
     [](const table::TableStats& s) { return static_cast<double>(s.keys); }},
    {{"sluice_limit_capacity", Kind::kGauge, "Slots in the rule's table."},
     [](const table::TableStats& s) { return static_cast<double>(s.capacity); }},
    {{"sluice_limit_evictions_total", Kind::kCounter,
      "Live keys evicted to make room for new ones."},
     [](const table::TableStats& s) { return static_cast<double>(s.evictions); }},
    {{"sluice_limit_idle_drops_total", Kind::kCounter, "Idle keys dropped to make room."},
     [](const table::TableStats& s) { return static_cast<double>(s.idle_drops); }},
};

constexpr Family kMemory{"sluice_limit_memory_bytes", Kind::kGauge,
                         "Memory a rule holds: its table's mapped budget (a local rule), its "
                         "top keys and its blocked keys (on_deny, a local rule)."};

constexpr Family kThrottleKeys{"sluice_resp_throttle_keys", Kind::kGauge, "CL.THROTTLE keys held."};
constexpr Family kThrottleEvictions{"sluice_resp_throttle_evictions_total", Kind::kCounter,
                                    "CL.THROTTLE keys evicted to make room for new ones."};
constexpr Family kPermits{"sluice_permits_held", Kind::kGauge,
                          "Concurrency permits the decision service holds for callers, by rule "
                          "(or inline limit)."};

// A route's adaptive limit, one row per figure.
struct AdaptiveFigure {
  Family family;
  double (*get)(const detail::AdaptiveGate::Gauges&);
};
constexpr AdaptiveFigure kAdaptiveFigures[] = {
    {{"sluice_adaptive_limit", Kind::kGauge, "The route's adaptive concurrency limit now."},
     [](const detail::AdaptiveGate::Gauges& g) { return static_cast<double>(g.limit); }},
    {{"sluice_adaptive_in_flight", Kind::kGauge,
      "Requests holding a permit of the route's adaptive limit."},
     [](const detail::AdaptiveGate::Gauges& g) { return static_cast<double>(g.in_flight); }},
    {{"sluice_adaptive_queued", Kind::kGauge,
      "Requests waiting for a permit of the route's adaptive limit."},
     [](const detail::AdaptiveGate::Gauges& g) { return static_cast<double>(g.queued); }},
    {{"sluice_adaptive_min_rtt_seconds", Kind::kGauge,
      "The lowest upstream round trip the route's adaptive limit sampled in the last 10 to 20 "
      "s."},
     [](const detail::AdaptiveGate::Gauges& g) { return static_cast<double>(g.min_rtt) / 1e9; }},
};
constexpr Family kShed{"sluice_adaptive_shed_total", Kind::kCounter,
                       "Requests the route's adaptive limit refused, by tier."};

void adaptive_series(metrics::Sink& sink, const Snapshot& snap) {
  for (const AdaptiveFigure& f : kAdaptiveFigures) sink.declare(f.family);
  sink.declare(kShed);
  for (const auto& r : snap.routes) {
    if (!r->gate) continue;
    const auto g = r->gate->gauges();
    for (const AdaptiveFigure& f : kAdaptiveFigures) {
      sink.add(f.family, {{"route", r->route.name}}, f.get(g));
    }
    for (std::size_t tier = 0; tier < g.shed.size(); ++tier) {
      if (g.shed[tier] == 0) continue;  // a tier appears with its first refusal
      sink.add(kShed, {{"route", r->route.name}, {"tier", std::to_string(tier)}},
               static_cast<double>(g.shed[tier]));
    }
  }
}

// A counter per label value. A series appears with its first event: rules x routes x
// outcomes written at 0 would be mostly placeholders that never move (a rule the decision
// service is never asked about).
using CounterRow = std::pair<std::string_view, const std::atomic<std::uint64_t>*>;
template <std::size_t N, class Emit>
void each_moved(const CounterRow (&rows)[N], Emit emit) {
  for (const auto& [value, n] : rows) {
    const std::uint64_t v = n->load(std::memory_order_relaxed);
    if (v > 0) emit(value, static_cast<double>(v));
  }
}

// `route` empty: a frontend without routes (no route label).
void outcomes(metrics::Sink& sink, std::string_view frontend, std::string_view route,
              std::string_view rule, const RuleCounters& c) {
  const CounterRow rows[] = {{"allowed", &c.allowed},
                             {"denied", &c.denied},
                             {"delayed", &c.delayed},
                             {"dry_run_denied", &c.dry_run_denied},
                             {"missing_key", &c.missing_key}};
  each_moved(rows, [&](std::string_view outcome, double v) {
    if (route.empty()) {
      sink.add(kRequests, {{"frontend", frontend}, {"rule", rule}, {"outcome", outcome}}, v);
    } else {
      sink.add(kRequests,
               {{"frontend", frontend}, {"route", route}, {"rule", rule}, {"outcome", outcome}}, v);
    }
  });
}

// A gateway rule's settled responses, by what each charged.
void settlements(metrics::Sink& sink, std::string_view route, std::string_view rule,
                 const RuleCounters& c) {
  const CounterRow rows[] = {{"stated", &c.settled_stated},
                             {"reserve", &c.settled_reserve},
                             {"nothing", &c.settled_nothing}};
  each_moved(rows, [&](std::string_view charged, double v) {
    sink.add(kSettlements, {{"route", route}, {"rule", rule}, {"charged", charged}}, v);
  });
  if (const std::uint64_t lost = c.settled_lost.load(std::memory_order_relaxed); lost > 0) {
    sink.add(kSettlementsLost, {{"route", route}, {"rule", rule}}, static_cast<double>(lost));
  }
}

}  // namespace

metrics::Registry::Registration Engine::register_metrics(metrics::Registry& registry) {
  return registry.add([state = state_.get()](metrics::Sink& sink) {
    const auto snap = state->snapshot();
    sink.declare(kRequests);
    sink.declare(kSettlements);
    sink.declare(kSettlementsLost);
    for (const auto& r : snap->routes) {
      for (const auto* list : {&r->enforce, &r->dry_run}) {
        for (const RouteRule& rr : *list) {
          outcomes(sink, "gateway", r->route.name, rr.rule->rule.name, *rr.counters);
          settlements(sink, r->route.name, rr.rule->rule.name, *rr.counters);
        }
      }
    }
    for (const auto& c : snap->compiled) {
      for (std::size_t v = 0; v < kVias; ++v) {
        outcomes(sink, kViaLabels[v], "", c->rule.name, (*c->check_counters)[v]);
      }
    }
    outcomes(sink, "cl_throttle", "", "cl.throttle", state->throttle_counters());
    const auto rls = [&](const CompiledLimit& l) {
      if (l.rls) outcomes(sink, "rls", "", l.name, *l.rls->counters);
    };
    if (snap->rls) {
      for (const auto& [path, limit] : snap->rls->limits) rls(*limit);
    }
    state->for_each_rls_override(rls);
    for (const TableFigure& f : kTableFigures) {
      sink.declare(f.family);
      for (const auto& c : snap->compiled) {
        if (!c->limit.table) continue;
        sink.add(f.family, {{"rule", c->rule.name}}, f.get(local::stats_of(*c->limit.table)));
      }
    }
    sink.declare(kMemory);
    for (const auto& c : snap->compiled) {
      const std::size_t table = c->limit.table ? local::stats_of(*c->limit.table).memory_bytes : 0;
      const std::size_t top = c->limit.top && c->limit.top->get() ? detail::kTopSketchBytes : 0;
      const std::size_t blocks = c->limit.blocks ? c->limit.blocks->memory_bytes() : 0;
      sink.add(kMemory, {{"rule", c->rule.name}}, static_cast<double>(table + top + blocks));
    }
    const table::TableStats t = state->throttle().stats();
    sink.add(kThrottleKeys, {}, static_cast<double>(t.keys));
    sink.add(kThrottleEvictions, {}, static_cast<double>(t.evictions));
    detail::breaker_metrics(sink, *snap);
    adaptive_series(sink, *snap);
    sink.declare(kPermits);
    for (const auto& [rule, n] : state->leases().held()) {
      sink.add(kPermits, {{"rule", rule}}, static_cast<double>(n));
    }
  });
}

}  // namespace sluice::engine
