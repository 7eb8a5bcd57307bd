// StatsHistory (stats_history.hpp): deltas of the engine's totals, one slot per second.
#include "stats_history.hpp"

#include <algorithm>
#include <limits>

namespace sluice::server {
namespace {

std::uint32_t clamp32(std::uint64_t v) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(v, std::numeric_limits<std::uint32_t>::max()));
}

// What moved from `before` to `now`; a counter that went down was made anew and counts in full.
std::uint64_t moved(std::uint64_t before, std::uint64_t now) {
  return now >= before ? now - before : now;
}

void add(StatsHistory::Point& p, const OutcomeCounts& d) {
  p.allowed = clamp32(std::uint64_t{p.allowed} + d.allowed);
  p.denied = clamp32(std::uint64_t{p.denied} + d.denied);
  p.delayed = clamp32(std::uint64_t{p.delayed} + d.delayed);
  p.dry_run_denied = clamp32(std::uint64_t{p.dry_run_denied} + d.dry_run_denied);
}

bool zero(const OutcomeCounts& c) {
  return c.allowed == 0 && c.denied == 0 && c.delayed == 0 && c.dry_run_denied == 0;
}

std::size_t slot(std::int64_t second) {
  return static_cast<std::size_t>(second % static_cast<std::int64_t>(StatsHistory::kPoints));
}

}  // namespace

std::size_t StatsHistory::rings_of(SeriesKind kind) const {
  return static_cast<std::size_t>(std::count_if(rows_.begin(), rows_.end(), [&](const Row& r) {
    return r.kind == kind && r.ring && r.name != kOther;
  }));
}

std::size_t StatsHistory::memory_bytes() const {
  return static_cast<std::size_t>(std::count_if(rows_.begin(), rows_.end(),
                                                [](const Row& r) { return r.ring != nullptr; })) *
         kSeriesBytes;
}

StatsHistory::Row& StatsHistory::row_for(SeriesKind kind, const std::string& name) {
  auto it = std::find_if(rows_.begin(), rows_.end(),
                         [&](const Row& r) { return r.kind == kind && r.name == name; });
  if (it == rows_.end()) {
    it = rows_.insert(rows_.end(), Row{kind, name, {}, 0, false, nullptr});
  }
  const std::size_t cap = kind == SeriesKind::kRule ? kMaxRules : kMaxRoutes;
  if (!it->ring && (name == kOther || rings_of(kind) < cap)) it->ring = std::make_unique<Ring>();
  return *it;
}

StatsHistory::Row& StatsHistory::other(SeriesKind kind) { return row_for(kind, kOther); }

void StatsHistory::advance(std::int64_t second) {
  const std::int64_t from = std::max(latest_ + 1, second - static_cast<std::int64_t>(kPoints) + 1);
  for (std::int64_t s = from; s <= second; ++s) {
    for (Row& r : rows_) {
      if (r.ring) (*r.ring)[slot(s)] = Point{};
    }
  }
  latest_ = second;
}

// A series gone from the counters (its rule deleted) keeps its ring until it has been still
// for the whole window; one past the cap holds nothing worth keeping.
void StatsHistory::prune() {
  std::erase_if(rows_, [&](const Row& r) {
    if (r.present || r.name == kOther) return false;
    return !r.ring || latest_ - r.last_moved >= static_cast<std::int64_t>(kPoints);
  });
}

void StatsHistory::sample(std::int64_t unix_second, const std::vector<SeriesTotal>& totals) {
  const bool baseline = latest_ == 0;
  if (baseline) {
    start_ = unix_second;
    latest_ = unix_second;
  } else if (unix_second > latest_) {
    advance(unix_second);
  }
  for (Row& r : rows_) r.present = false;
  for (const SeriesTotal& t : totals) {
    Row& row = row_for(t.kind, t.name);
    // A series the last sample did not name (new, or its rule made again) starts from zero.
    const OutcomeCounts before = row.last_total;
    const OutcomeCounts delta{moved(before.allowed, t.total.allowed),
                              moved(before.denied, t.total.denied),
                              moved(before.delayed, t.total.delayed),
                              moved(before.dry_run_denied, t.total.dry_run_denied)};
    row.last_total = t.total;
    row.present = true;
    if (baseline || zero(delta)) continue;
    row.last_moved = latest_;
    Row& into = row.ring ? row : other(t.kind);
    into.last_moved = latest_;
    add((*into.ring)[slot(latest_)], delta);
  }
  for (Row& r : rows_) {
    if (!r.present) r.last_total = OutcomeCounts{};
  }
  prune();
}

StatsHistory::Window StatsHistory::since(std::int64_t since) const {
  Window w;
  w.last = latest_;
  if (latest_ == 0) return w;
  const std::int64_t first =
      std::max({since + 1, latest_ - static_cast<std::int64_t>(kPoints) + 1, start_ + 1});
  w.first = first;
  for (const Row& r : rows_) {
    if (!r.ring) continue;
    Series s{r.kind, r.name, {}};
    for (std::int64_t sec = first; sec <= latest_; ++sec) s.points.push_back((*r.ring)[slot(sec)]);
    w.series.push_back(std::move(s));
  }
  return w;
}

}  // namespace sluice::server
