// Test support for the public API's tests: an instant written as the time since the clock's
// epoch (at(250ms)). One definition, so the layer's tests can share a unity file.
#pragma once

#include "sluice/limiter.hpp"

namespace sluice::test {

inline Time at(Duration d) { return Time(d); }

}  // namespace sluice::test
