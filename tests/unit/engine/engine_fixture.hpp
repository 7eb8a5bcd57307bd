// What the engine's unit tests share: a config text loaded as the server would load it (its
// errors failing the test), and one ask decided into a fresh outcome.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine {

inline config::RuleSet load_rules(const std::string& yaml) {
  auto loaded = config::load_config_text(yaml, "test.yaml");
  std::string errors;
  for (const auto& e : loaded.errors) errors += e.format() + "\n";
  EXPECT_TRUE(loaded.rules.has_value()) << errors;
  return loaded.rules ? *loaded.rules : config::RuleSet{};
}

inline Outcome ask(Engine& e, const Ask& a, core::Nanos now = 0) {
  Outcome out;
  e.decide(a, now, out);
  return out;
}

}  // namespace sluice::engine
