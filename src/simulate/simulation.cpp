// run() (sluice/simulate/simulation.hpp): one pass over the generated requests; every limit
// decides each one, so memory is the limits' key states plus the counters.
#include "sluice/simulate/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sluice/core/int128.hpp"
#include "sluice/local/limit_set.hpp"

namespace sluice::simulate {
namespace {

constexpr std::int64_t kProgressEvery = 4096;

std::size_t buckets_for(core::Nanos duration, core::Nanos bucket) {
  return static_cast<std::size_t>(duration / bucket + (duration % bucket != 0 ? 1 : 0));
}

// Counts one decision of one limit on one request.
void count(LimitSeries& series, const Arrival& a, const core::Decision& d, core::Nanos bucket,
           std::size_t max_buckets) {
  auto& row = series.cells[a.source];
  const auto b = static_cast<std::size_t>(a.t / bucket);
  if (!d.allowed) {
    ++row[b].denied;
    ++series.denied;
    return;
  }
  const std::int64_t delay_us = core::ceil_micros(d.delay);
  Cell& cell = row[b];
  ++cell.admitted;
  ++series.admitted;
  ++series.admitted_by_source[a.source];
  series.delays.add(delay_us);
  if (delay_us > 0) {
    ++cell.delayed;
    ++series.delayed;
    cell.delay_sum_us += delay_us;
    cell.delay_max_us = std::max(cell.delay_max_us, delay_us);
  }
  // When it proceeds, by the delay as reported (whole µs, rounded up), so a float reference's
  // 99.999999 ms and an exact 100 ms land in the same bucket.
  const core::Nanos proceeds =
      core::saturating_add(a.t, core::saturating_mul(delay_us, core::kNanosPerMicro));
  const auto pb = static_cast<std::size_t>(proceeds / bucket);
  if (pb >= max_buckets) {
    ++series.passed_late;
    return;
  }
  if (pb >= row.size()) row.resize(pb + 1);
  ++row[pb].passed;
}

std::string overflow_message(const Scenario& sc, const Arrival& a) {
  return "source '" + sc.sources[a.source].name + "': the request at " +
         std::to_string(a.t / core::kNanosPerMicro) +
         " us: time or cost too large: its arithmetic would overflow 64-bit nanoseconds";
}

// Pads every series to the longest one, so each source and limit has `buckets` cells.
void even_out(Result& r) {
  std::size_t n = r.buckets;
  for (const auto& l : r.limits) {
    for (const auto& row : l.cells) n = std::max(n, row.size());
  }
  r.buckets = n;
  for (auto& row : r.offered) row.resize(n);
  for (auto& l : r.limits) {
    for (auto& row : l.cells) row.resize(n);
  }
}

}  // namespace

core::Nanos default_bucket(core::Nanos duration) {
  constexpr std::int64_t kTarget = 200;
  for (core::Nanos decade = core::kNanosPerMicro;; decade *= 10) {
    for (core::Nanos step : {decade, 2 * decade, 5 * decade}) {
      if (duration / step + (duration % step != 0 ? 1 : 0) <= kTarget) return step;
    }
    if (decade > core::kForever / 100) return duration;
  }
}

core::Expected<bool> check_bounds(const Scenario& sc, std::size_t limits, const RunOptions& o) {
  const auto buckets = static_cast<core::Int128>(buckets_for(o.duration, o.bucket));
  const core::Int128 cells = static_cast<core::Int128>(limits) * sc.sources.size() * buckets * 2;
  if (cells > kMaxCells) {
    return core::make_error(
        "--bucket: " + std::to_string(static_cast<std::int64_t>(buckets)) + " buckets of " +
        core::format_duration(o.bucket) + " for " + std::to_string(limits) + " limits and " +
        std::to_string(sc.sources.size()) + " sources would need more than " +
        std::to_string(kMaxCells) + " counters: give a larger --bucket or a shorter --duration");
  }
  const double requests = expected_requests(sc, o.duration);
  if (requests > kMaxRequests) {
    return core::make_error(fmt::format(
        "--duration: {} of this scenario sends about {:.3g} requests, more than {:.0f}: give a "
        "shorter --duration or lower rates",
        core::format_duration(o.duration), requests, kMaxRequests));
  }
  return true;
}

core::Expected<Result> run(const Scenario& sc, const std::vector<LimitUnderTest>& limits,
                           const RunOptions& o, const Hooks& hooks) {
  if (auto bounds = check_bounds(sc, limits.size(), o); !bounds) {
    return core::make_error(bounds.error());
  }
  Result r;
  r.duration = o.duration;
  r.bucket = o.bucket;
  r.buckets = buckets_for(o.duration, o.bucket);
  const std::size_t max_buckets = 2 * r.buckets;
  for (const auto& s : sc.sources) r.sources.push_back(s.name);
  r.offered.assign(sc.sources.size(), std::vector<std::int64_t>(r.buckets));
  r.offered_by_source.assign(sc.sources.size(), 0);
  std::vector<local::LimitSet> sets;
  for (const auto& l : limits) {
    sets.emplace_back(std::vector<spec::LimitSpec>{l.spec}, o.max_wait);
    LimitSeries series;
    series.label = l.label;
    series.cells.assign(sc.sources.size(), std::vector<Cell>(r.buckets));
    series.admitted_by_source.assign(sc.sources.size(), 0);
    r.limits.push_back(std::move(series));
  }

  Traffic traffic(sc, o.duration, o.seed);
  while (auto a = traffic.next()) {
    const std::string_view key = traffic.key(*a);
    if (hooks.request) hooks.request(*a, key);
    ++r.offered[a->source][static_cast<std::size_t>(a->t / o.bucket)];
    ++r.offered_by_source[a->source];
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const core::Decision d = sets[i].decide(key, a->t, a->cost);
      if (d.overflow) return core::make_error(overflow_message(sc, *a));
      count(r.limits[i], *a, d, o.bucket, max_buckets);
    }
    if (++r.requests % kProgressEvery == 0 && hooks.progress) {
      hooks.progress(static_cast<double>(a->t) / static_cast<double>(o.duration));
    }
  }
  even_out(r);
  return r;
}

}  // namespace sluice::simulate
