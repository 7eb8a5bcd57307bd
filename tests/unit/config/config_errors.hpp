// Test support for the config layer: a load's errors as the text a person reads, one
// "file:line: message" a line. One definition, so the layer's tests can share a unity file.
#pragma once

#include <string>

#include "sluice/config/loader.hpp"

namespace sluice::test {

inline std::string errors_of(const config::Loaded& loaded) {
  std::string out;
  for (const auto& e : loaded.errors) out += e.format() + "\n";
  return out;
}

}  // namespace sluice::test
