// The offered load of the open-loop generator: steps of "rate for duration", written
// "RATE:DURATION,RATE:DURATION" (e.g. "800:30s,1600:30s"), and when each request is due.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sluice_test {

struct LoadStep {
  double rate = 0;  // requests per second
  std::int64_t duration_ns = 0;
};

// "250ms", "3s", "1500us", "2m"; a plain number is seconds.
inline std::int64_t parse_duration_ns(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("bad duration '" + text + "' (e.g. 30s, 250ms)");
  }
  const std::string unit = text.substr(used);
  double scale = 1e9;
  if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "m")
    scale = 60e9;
  else if (!unit.empty() && unit != "s") {
    throw std::invalid_argument("bad duration unit in '" + text + "' (us, ms, s, m)");
  }
  if (!(v >= 0)) throw std::invalid_argument("negative duration '" + text + "'");
  return static_cast<std::int64_t>(v * scale);
}

inline std::vector<LoadStep> parse_schedule(const std::string& text) {
  std::vector<LoadStep> steps;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(pos, end - pos);
    const auto colon = part.find(':');
    if (colon == std::string::npos) {
      throw std::invalid_argument("schedule step '" + part + "' is not RATE:DURATION");
    }
    LoadStep step;
    try {
      step.rate = std::stod(part.substr(0, colon));
    } catch (const std::exception&) {
      throw std::invalid_argument("bad rate in schedule step '" + part + "'");
    }
    step.duration_ns = parse_duration_ns(part.substr(colon + 1));
    if (!(step.rate >= 0 && step.rate <= 1e6) || step.duration_ns <= 0) {
      throw std::invalid_argument("schedule step '" + part + "': rate 0-1000000, duration > 0");
    }
    steps.push_back(step);
    pos = end + 1;
  }
  return steps;
}

// Request i of a step is due at step start + i / rate: a constant arrival rate that no slow
// answer can hold back.
class Arrivals {
 public:
  explicit Arrivals(std::vector<LoadStep> steps) : steps_(std::move(steps)) {}

  // The time of the next request after the previous one (from 0), or -1 when the schedule ends.
  std::int64_t next() {
    while (step_ < steps_.size()) {
      const LoadStep& s = steps_[step_];
      if (s.rate > 0) {
        const auto at = static_cast<std::int64_t>(static_cast<double>(index_) * 1e9 / s.rate);
        if (at < s.duration_ns) {
          ++index_;
          return step_start_ + at;
        }
      }
      step_start_ += s.duration_ns;
      ++step_;
      index_ = 0;
    }
    return -1;
  }
  std::int64_t total_ns() const {
    std::int64_t t = 0;
    for (const auto& s : steps_) t += s.duration_ns;
    return t;
  }

 private:
  std::vector<LoadStep> steps_;
  std::size_t step_ = 0;
  std::int64_t index_ = 0;
  std::int64_t step_start_ = 0;
};

}  // namespace sluice_test
