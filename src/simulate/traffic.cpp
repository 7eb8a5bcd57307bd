// Traffic (sluice/simulate/traffic.hpp): one stream per source, merged by a heap on their next
// times. Times are cut to whole microseconds, the resolution of a replay trace.
#include "sluice/simulate/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sluice/core/int128.hpp"

namespace sluice::simulate {
namespace {

core::Nanos whole_micros(core::Nanos t) { return t - t % core::kNanosPerMicro; }

// Seconds (a double) to whole microseconds, or `end` when at or past it.
core::Nanos at_or_end(double seconds, core::Nanos end) {
  const double ns = seconds * 1e9;
  if (!(ns < static_cast<double>(end))) return end;
  return whole_micros(static_cast<core::Nanos>(ns));
}

}  // namespace

double expected_requests(const Scenario& sc, core::Nanos duration) {
  double total = 0;
  for (const Source& s : sc.sources) {
    const core::Nanos end = std::min(s.end, duration);
    if (end <= s.start) continue;
    const double active = static_cast<double>(end - s.start) / 1e9;
    const double low = s.low.count == 0 ? 0.0 : s.low.per_second();
    switch (s.shape) {
      case Shape::kDiurnal:
        total += active * (low + s.rate.per_second()) / 2;
        break;
      case Shape::kBurst:
      case Shape::kBoundary: {
        const double rounds = s.every == 0 ? 1 : 1 + active / (static_cast<double>(s.every) / 1e9);
        total += rounds * static_cast<double>(s.count) * (s.shape == Shape::kBoundary ? 2 : 1);
        break;
      }
      default:
        total += active * s.rate.per_second();
    }
  }
  return total;
}

std::uint64_t Random::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Random::unit() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

std::int64_t Random::below(std::int64_t n) {
  const auto wide = static_cast<core::UInt128>(next()) * static_cast<std::uint64_t>(n);
  return static_cast<std::int64_t>(wide >> 64);
}

Traffic::Traffic(const Scenario& scenario, core::Nanos duration, std::uint64_t seed) {
  streams_.resize(scenario.sources.size());
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    Stream& s = streams_[i];
    const Source& src = scenario.sources[i];
    s.source = &src;
    Random mixer(seed ^ (0xd1b54a32d192ed03ULL * (i + 1)));
    s.random = Random(mixer.next());
    s.end = std::min(src.end, duration);
    s.clock_s = static_cast<double>(src.start) / 1e9;
    s.period_s = static_cast<double>(src.period != 0 ? src.period : duration) / 1e9;
    // A repeated burst that begins before `start` skips the rounds before it at once.
    const bool rounds = src.shape == Shape::kBurst || src.shape == Shape::kBoundary;
    if (rounds && src.every > 0 && src.at < src.start) {
      s.index = (src.start - src.at) / src.every * (src.shape == Shape::kBoundary ? 2 : 1);
    }
    advance(s);
    if (!s.done) order_.emplace(s.next, static_cast<std::uint32_t>(i));
  }
}

std::optional<Arrival> Traffic::next() {
  if (order_.empty()) return std::nullopt;
  const auto [t, i] = order_.top();
  order_.pop();
  Stream& s = streams_[i];
  Arrival a{t, i, 0, s.source->cost};
  if (s.source->keys > 1) a.key = s.random.below(s.source->keys);
  advance(s);
  if (!s.done) order_.emplace(s.next, i);
  return a;
}

std::string_view Traffic::key(const Arrival& a) {
  const Source& src = *streams_[a.source].source;
  if (src.keys == 1) return src.key;
  key_ = src.key;
  key_ += '-';
  key_ += std::to_string(a.key);
  return key_;
}

void Traffic::advance(Stream& s) {
  const Source& src = *s.source;
  switch (src.shape) {
    case Shape::kSteady: {
      // The k-th request at start + k·period/count, exactly, then cut to microseconds.
      const auto offset = static_cast<core::Int128>(s.index++) * src.rate.period / src.rate.count;
      const core::Int128 t = static_cast<core::Int128>(src.start) + offset;
      if (t >= s.end) {
        s.done = true;
        return;
      }
      s.next = whole_micros(static_cast<core::Nanos>(t));
      return;
    }
    case Shape::kBurst:
    case Shape::kBoundary:
      advance_burst(s);
      return;
    default:
      advance_random(s);
      return;
  }
}

// Poisson arrivals: exponential gaps of mean 1/rate. A diurnal source thins arrivals at its peak
// rate down to rate(t) (Lewis and Shedler), a trough-to-peak cosine over its period.
void Traffic::advance_random(Stream& s) {
  const Source& src = *s.source;
  const double peak = src.rate.per_second();
  const double low = src.low.count == 0 ? 0.0 : src.low.per_second();
  const double start_s = static_cast<double>(src.start) / 1e9;
  for (;;) {
    s.clock_s += -std::log(s.random.unit()) / peak;
    s.next = at_or_end(s.clock_s, s.end);
    if (s.next >= s.end) {
      s.done = true;
      return;
    }
    if (src.shape != Shape::kDiurnal) return;
    const double phase = 2 * std::numbers::pi * (s.clock_s - start_s) / s.period_s;
    const double rate = low + (peak - low) * (1 - std::cos(phase)) / 2;
    if (s.random.unit() * peak <= rate) return;
  }
}

// Bursts come in rounds at `at + round·every`: one instant each, or two for a boundary (`gap`
// before the boundary, and on it), `count` requests at each instant.
void Traffic::advance_burst(Stream& s) {
  const Source& src = *s.source;
  const std::int64_t halves = src.shape == Shape::kBoundary ? 2 : 1;
  while (s.left == 0) {
    const std::int64_t round = s.index / halves;
    const bool first_half = halves == 2 && s.index % halves == 0;
    if (round > 0 && src.every == 0) {
      s.done = true;
      return;
    }
    const core::Nanos boundary =
        core::saturating_add(src.at, core::saturating_mul(round, src.every));
    const core::Nanos t = first_half ? boundary - src.gap : boundary;
    ++s.index;
    if (t >= s.end) {
      s.done = true;
      return;
    }
    if (t < src.start) continue;
    s.next = t;
    s.left = src.count;
  }
  --s.left;
}

}  // namespace sluice::simulate
