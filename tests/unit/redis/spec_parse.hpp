// Test support for the Redis backend's tests: a limit spec that must parse (the test fails
// if it does not). One definition, so the layer's tests can share a unity file.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "sluice/spec/limit_spec.hpp"

namespace sluice::test {

inline spec::LimitSpec parse(const std::string& text) {
  auto s = spec::parse_limit_spec(text);
  EXPECT_TRUE(s.ok()) << text;
  return *s;
}

}  // namespace sluice::test
