// The boundary between the public API's types (std::chrono, sluice::Decision) and the core's
// (integer nanoseconds, core::Decision), in one place so every limiter converts alike.
#pragma once

#include <cstdint>
#include <optional>

#include "sluice/core/decision.hpp"
#include "sluice/core/time.hpp"
#include "sluice/decision.hpp"

namespace sluice::api {

core::Nanos to_nanos(Time t);

// A negative max_wait means no waiting; kForever stays the core's kForever.
core::Nanos to_max_wait(Duration max_wait);

// Throws std::invalid_argument for a cost below 1: a caller bug, not a denial.
void check_cost(std::int64_t cost);

// An overflowing request is reported as one that can never be admitted.
Decision to_public(const core::Decision& d);

inline std::optional<Duration> reservation(const Decision& d) {
  if (!d.allowed) return std::nullopt;
  return d.wait;
}

}  // namespace sluice::api
