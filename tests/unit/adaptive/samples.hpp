// Test support for the adaptive limits: a successful sample as the algorithms' tests write it.
// (One definition, so the layer's tests can share a unity file.)
#pragma once

#include <cstdint>

#include "sluice/adaptive/sample.hpp"

namespace sluice::test {

inline adaptive::Sample success(core::Nanos rtt, std::int64_t in_flight) {
  return adaptive::Sample{0, rtt, in_flight, adaptive::Outcome::kSuccess};
}

}  // namespace sluice::test
