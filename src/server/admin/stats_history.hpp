// The dashboard's live rates (docs/dashboard.md): each rule's and each route's decisions per
// second over the last 15 minutes, in a fixed ring, so its memory is capped whatever the rules.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace sluice::server {

// Decisions of one second (a delta) or since start (a total), by outcome.
struct OutcomeCounts {
  std::uint64_t allowed = 0;
  std::uint64_t denied = 0;
  std::uint64_t delayed = 0;
  std::uint64_t dry_run_denied = 0;
};

enum class SeriesKind { kRule, kRoute };

// One series' running total, as a sample of the engine's counters gives it.
struct SeriesTotal {
  SeriesKind kind;
  std::string name;
  OutcomeCounts total;
};

class StatsHistory {
 public:
  static constexpr std::size_t kPoints = 900;  // 15 minutes at 1 s
  static constexpr std::size_t kMaxRules = 128;
  static constexpr std::size_t kMaxRoutes = 64;
  static constexpr const char* kOther = "(other)";  // the row past the cap
  // One second of one series: 4 counters of 4 bytes (a second's count saturates at 2^32-1).
  struct Point {
    std::uint32_t allowed = 0, denied = 0, delayed = 0, dry_run_denied = 0;
  };
  static constexpr std::size_t kSeriesBytes = kPoints * sizeof(Point);  // 14,400
  // Both kinds full, with their "(other)" rows: 194 x 14,400 = 2,793,600 bytes.
  static constexpr std::size_t kMaxBytes = (kMaxRules + kMaxRoutes + 2) * kSeriesBytes;

  // Takes the totals the counters hold at `unix_second`; what moved since the last sample is
  // that second's. The first sample only sets the baseline. A total below its last (the rule
  // replaced, its counters new) counts in full. A second older than the latest one adds to the
  // latest.
  void sample(std::int64_t unix_second, const std::vector<SeriesTotal>& totals);

  struct Series {
    SeriesKind kind;
    std::string name;
    std::vector<Point> points;  // oldest first
  };
  struct Window {
    std::int64_t first = 0;  // the unix second of points[0]; 0 with no points
    std::int64_t last = 0;   // the latest second sampled; 0 before any
    std::vector<Series> series;
  };
  // The seconds after `since` (at most the last kPoints), of every series.
  Window since(std::int64_t since) const;

  // Bytes held by the series' rings (each kSeriesBytes), at most kMaxBytes.
  std::size_t memory_bytes() const;

 private:
  using Ring = std::array<Point, kPoints>;
  // A series seen in the counters. Past the cap it has no ring: its seconds go to "(other)",
  // and it keeps only its last total (about 100 bytes).
  struct Row {
    SeriesKind kind;
    std::string name;
    OutcomeCounts last_total;     // what the counters said last time
    std::int64_t last_moved = 0;  // the latest second it moved
    bool present = false;         // named by the latest sample
    std::unique_ptr<Ring> ring;
  };
  Row& row_for(SeriesKind kind, const std::string& name);
  Row& other(SeriesKind kind);
  std::size_t rings_of(SeriesKind kind) const;
  void advance(std::int64_t second);
  void prune();

  std::list<Row> rows_;      // a list: a reference to a row outlives adding "(other)"
  std::int64_t start_ = 0;   // the baseline sample's second: points begin after it
  std::int64_t latest_ = 0;  // the second the ring's head holds
};

}  // namespace sluice::server
