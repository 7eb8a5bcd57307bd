// The scenarios `sluice simulate --scenario NAME` knows by name, written in the same YAML a
// scenario file uses (so `--print-scenario NAME` gives a file to start from), and the lookup
// of a NAME or FILE.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "sluice/core/expected.hpp"
#include "sluice/simulate/scenario.hpp"

namespace sluice::simulate {

struct BuiltinScenario {
  std::string_view name;
  std::string_view yaml;
};

std::span<const BuiltinScenario> builtin_scenarios();

// The built-in of that name, or nullptr.
const BuiltinScenario* find_builtin(std::string_view name);

// A built-in's name (no '/' and no '.'), or else a file's path. Errors name the argument: an
// unknown name lists the built-ins; a file that cannot be read says why; a file is read only up
// to kMaxScenarioBytes.
core::Expected<Scenario> load_scenario(const std::string& name_or_path);

}  // namespace sluice::simulate
