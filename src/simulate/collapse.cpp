// The collapse model (sluice/simulate/collapse.hpp): one discrete-event loop per guard over the
// same arrivals. The events: an arrival, an answer, a client's deadline and the algorithm's own
// timer (Envoy's), the earliest first; the gateway's side is the route gate's (admit while in
// flight < limit, refuse at once, learn from each end).
#include "sluice/simulate/collapse.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <optional>
#include <queue>
#include <random>

#include "sluice/adaptive/any_limit.hpp"
#include "sluice/adaptive/named_limit.hpp"

namespace sluice::simulate {
namespace {

constexpr core::Nanos kMs = core::kNanosPerMilli;
constexpr core::Nanos kSec = core::kNanosPerSecond;

const std::array<CollapseModel, 3> kModels{{
    {"collapse",
     "C = 16 workers, S = 10 ms: load at 0.5x, 1x, 2x, 3x its capacity, then back to 1x",
     {{10 * kSec, 0.5, 16, 10 * kMs},
      {10 * kSec, 1, 16, 10 * kMs},
      {10 * kSec, 2, 16, 10 * kMs},
      {10 * kSec, 3, 16, 10 * kMs},
      {10 * kSec, 1, 16, 10 * kMs}}},
    {"collapse-slows",
     "C = 16, S = 10 ms at 1x, then 2x; 5 s into it S doubles (capacity 1600/s becomes 800/s)",
     {{10 * kSec, 1, 16, 10 * kMs}, {5 * kSec, 2, 16, 10 * kMs}, {25 * kSec, 2, 16, 20 * kMs}}},
    {"collapse-shrinks",
     "C = 16, S = 10 ms at 1x, then 2x; 5 s into it 8 workers go (capacity 1600/s becomes 800/s)",
     {{10 * kSec, 1, 16, 10 * kMs}, {5 * kSec, 2, 16, 10 * kMs}, {25 * kSec, 2, 8, 10 * kMs}}},
}};

core::Expected<adaptive::AnyLimit> start(const Guard& g, std::uint64_t seed) {
  adaptive::LimitSettings s;
  if (g.min_rtt_interval > 0) s.min_rtt_interval = g.min_rtt_interval;
  return adaptive::start_named(g.algorithm, s, 0, seed);
}

// The guard's limit as the loop sees it: fixed, or the algorithm's.
struct Gate {
  std::optional<adaptive::AnyLimit> any;
  std::int64_t fixed = 0;  // 0 with no algorithm: no limit

  std::int64_t limit() const { return any ? adaptive::current_limit(*any) : fixed; }
  bool unlimited() const { return !any && fixed == 0; }
  bool admits(std::int64_t in_flight) const {
    return unlimited() || adaptive::admits(limit(), in_flight);
  }
  core::Nanos next_event() const { return any ? adaptive::next_event(*any) : core::kForever; }
  void advance(core::Nanos now) {
    if (any) adaptive::advance_limit(*any, now);
  }
  void learn(const adaptive::Sample& s) {
    if (any) adaptive::learn(*any, s);
  }
};

struct Flight {
  core::Nanos start;
  std::int64_t in_flight;
  bool open = true;
};

// Per bucket: the counts, and the latencies of the answers for the p99.
struct Tally {
  std::vector<CollapseBucket> buckets;
  std::vector<std::vector<core::Nanos>> latencies;
  core::Nanos bucket;
  std::size_t at(core::Nanos t) const {
    return std::min(buckets.size() - 1, static_cast<std::size_t>(t / bucket));
  }
};

class Run {
 public:
  Run(const CollapseModel& m, Gate gate, core::Nanos bucket, std::uint64_t seed)
      : m_(m), gate_(std::move(gate)), rng_(seed) {
    const auto n = static_cast<std::size_t>((m.duration() + bucket - 1) / bucket);
    tally_.buckets.resize(n);
    tally_.latencies.resize(n);
    tally_.bucket = bucket;
  }

  std::vector<CollapseBucket> go();

 private:
  std::vector<CollapseBucket> finished();
  std::size_t phase_at(core::Nanos t) {
    while (phase_ + 1 < m_.phases.size() && t >= phase_end_) {
      ++phase_;
      phase_end_ += m_.phases[phase_].length;
    }
    return phase_;
  }
  void serve_next(core::Nanos now);
  void finish(std::size_t f, core::Nanos now, bool answered);
  void arrive(core::Nanos now);

  const CollapseModel& m_;
  Gate gate_;
  std::mt19937_64 rng_;
  Tally tally_;
  std::size_t phase_ = 0;
  core::Nanos phase_end_ = 0;
  std::vector<Flight> flights_;
  std::deque<std::size_t> queue_;  // at the upstream, waiting for a worker
  using Done = std::pair<core::Nanos, std::size_t>;
  std::priority_queue<Done, std::vector<Done>, std::greater<>> busy_;  // in service
  std::deque<std::size_t> deadlines_;  // open flights, in start order
  std::int64_t in_flight_ = 0;
};

void Run::serve_next(core::Nanos now) {
  const CollapsePhase& ph = m_.phases[phase_at(now)];
  std::uniform_int_distribution<core::Nanos> service(
      std::max<core::Nanos>(1, ph.service - m_.jitter), ph.service + m_.jitter);
  while (static_cast<int>(busy_.size()) < ph.workers && !queue_.empty()) {
    busy_.push({now + service(rng_), queue_.front()});
    queue_.pop_front();
  }
}

void Run::finish(std::size_t f, core::Nanos now, bool answered) {
  Flight& fl = flights_[f];
  fl.open = false;
  --in_flight_;
  const std::size_t b = tally_.at(fl.start);
  if (answered) {
    tally_.buckets[b].goodput += 1;
    tally_.latencies[b].push_back(now - fl.start);
  } else {
    tally_.buckets[b].timeouts += 1;
  }
  gate_.learn({fl.start, now - fl.start, fl.in_flight,
               answered ? adaptive::Outcome::kSuccess : adaptive::Outcome::kDropped});
}

void Run::arrive(core::Nanos now) {
  CollapseBucket& b = tally_.buckets[tally_.at(now)];
  b.offered += 1;
  if (!gate_.admits(in_flight_)) {
    b.refused += 1;
    return;
  }
  ++in_flight_;
  flights_.push_back(Flight{now, in_flight_});
  queue_.push_back(flights_.size() - 1);
  deadlines_.push_back(flights_.size() - 1);
  serve_next(now);
}

std::vector<CollapseBucket> Run::go() {
  const core::Nanos end = m_.duration();
  phase_end_ = m_.phases[0].length;
  std::size_t last_bucket = 0;
  for (core::Nanos next = 0; next < end;) {
    core::Nanos now = next;
    if (!busy_.empty()) now = std::min(now, busy_.top().first);
    while (!deadlines_.empty() && !flights_[deadlines_.front()].open) deadlines_.pop_front();
    if (!deadlines_.empty()) now = std::min(now, flights_[deadlines_.front()].start + m_.deadline);
    now = std::min(now, gate_.next_event());
    gate_.advance(now);
    for (; last_bucket < tally_.at(now); ++last_bucket) {
      tally_.buckets[last_bucket].limit = static_cast<double>(gate_.limit());
    }
    if (!busy_.empty() && busy_.top().first == now) {
      const std::size_t f = busy_.top().second;
      busy_.pop();
      if (flights_[f].open) finish(f, now, true);
      serve_next(now);
    } else if (!deadlines_.empty() && flights_[deadlines_.front()].start + m_.deadline == now) {
      finish(deadlines_.front(), now, false);
    } else if (now == next) {
      arrive(now);
      const double rate = m_.phases[phase_at(now)].load * m_.capacity();
      next += std::max<core::Nanos>(1, static_cast<core::Nanos>(1e9 / rate));
    }
  }
  for (; last_bucket < tally_.buckets.size(); ++last_bucket) {
    tally_.buckets[last_bucket].limit = static_cast<double>(gate_.limit());
  }
  return finished();
}

// Counts to rates per second; each bucket's p99 and the upstream's capacity at its start.
std::vector<CollapseBucket> Run::finished() {
  const double per_second = 1e9 / static_cast<double>(tally_.bucket);
  phase_ = 0;
  phase_end_ = m_.phases[0].length;
  for (std::size_t i = 0; i < tally_.buckets.size(); ++i) {
    CollapseBucket& b = tally_.buckets[i];
    for (double* v : {&b.offered, &b.goodput, &b.refused, &b.timeouts}) *v *= per_second;
    if (gate_.unlimited()) b.limit = 0;
    b.capacity = m_.capacity(phase_at(static_cast<core::Nanos>(i) * tally_.bucket));
    auto& l = tally_.latencies[i];
    if (l.empty()) continue;
    const std::size_t k = (l.size() * 99 + 99) / 100 - 1;  // nearest rank
    std::nth_element(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(k), l.end());
    b.p99_ms = static_cast<double>(l[k]) / 1e6;
  }
  return std::move(tally_.buckets);
}

}  // namespace

double CollapseModel::capacity(std::size_t phase) const {
  const CollapsePhase& p = phases.at(phase);
  return p.workers * 1e9 / static_cast<double>(p.service);
}

core::Nanos CollapseModel::duration() const {
  core::Nanos d = 0;
  for (const auto& p : phases) d += p.length;
  return d;
}

std::span<const CollapseModel> collapse_models() { return kModels; }

const CollapseModel* find_collapse_model(std::string_view name) {
  for (const auto& m : kModels) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

core::Expected<Guard> parse_guard(std::string_view text) {
  Guard g;
  g.label = std::string(text);
  if (text == "none") return g;
  const std::size_t colon = text.find(':');
  const std::string_view head = text.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (head == "static") {
    auto n = core::parse_count(std::string(rest), "static");
    if (!n || *n < 1) {
      return core::make_error("'" + g.label + "': static:N needs a limit N of at least 1");
    }
    g.kind = Guard::Kind::kStatic;
    g.limit = *n;
    return g;
  }
  if (std::find(adaptive::kAlgorithmNames.begin(), adaptive::kAlgorithmNames.end(), head) ==
      adaptive::kAlgorithmNames.end()) {
    return core::make_error("'" + g.label +
                            "': not a guard (none, static:N, envoy-gradient, gradient2, vegas, "
                            "aimd)");
  }
  g.kind = Guard::Kind::kAdaptive;
  g.algorithm = std::string(head);
  if (rest.empty()) return g;
  constexpr std::string_view kKey = "min_rtt_interval=";
  if (head != "envoy-gradient" || !rest.starts_with(kKey)) {
    return core::make_error("'" + g.label +
                            "': only envoy-gradient takes an option, min_rtt_interval=DURATION");
  }
  auto d = core::parse_duration(std::string(rest.substr(kKey.size())));
  if (!d || *d < kMs) {
    return core::make_error("'" + g.label +
                            "': min_rtt_interval must be a duration of 1ms or more");
  }
  g.min_rtt_interval = *d;
  return g;
}

std::vector<std::string> default_guards(const CollapseModel& model) {
  std::vector<std::string> out{"none", "static:" + std::to_string(model.phases.at(0).workers)};
  out.insert(out.end(), adaptive::kAlgorithmNames.begin(), adaptive::kAlgorithmNames.end());
  return out;
}

core::Expected<CollapseResult> run_collapse(const CollapseModel& model,
                                            std::span<const Guard> guards, core::Nanos bucket,
                                            std::uint64_t seed) {
  if (guards.empty() || guards.size() > kMaxGuards) {
    return core::make_error("from 1 to " + std::to_string(kMaxGuards) + " guards side by side");
  }
  if (bucket <= 0 || model.duration() / bucket > 100000) {
    return core::make_error("the bucket must be more than 0 and at most 100000 to a run");
  }
  CollapseResult r{&model, bucket, {}};
  for (const Guard& g : guards) {
    Gate gate;
    if (g.kind == Guard::Kind::kStatic) gate.fixed = g.limit;
    if (g.kind == Guard::Kind::kAdaptive) {
      auto any = start(g, seed);
      if (!any) return core::make_error("'" + g.label + "': " + any.error());
      gate.any = std::move(*any);
    }
    Run run(model, std::move(gate), bucket, seed);
    r.series.push_back({g.label, run.go()});
  }
  return r;
}

}  // namespace sluice::simulate

namespace sluice::simulate {

double phase_goodput_share(const CollapseResult& r, std::size_t series, std::size_t phase,
                           core::Nanos skip) {
  const CollapseModel& m = *r.model;
  core::Nanos from = 0;
  for (std::size_t i = 0; i < phase; ++i) from += m.phases.at(i).length;
  const core::Nanos to = from + m.phases.at(phase).length;
  from += skip;
  double sum = 0;
  int n = 0;
  const auto& buckets = r.series.at(series).buckets;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const auto t = static_cast<core::Nanos>(i) * r.bucket;
    if (t < from || t + r.bucket > to) continue;
    sum += buckets[i].goodput;
    ++n;
  }
  return n == 0 ? 0 : sum / n / m.capacity(phase);
}

}  // namespace sluice::simulate
