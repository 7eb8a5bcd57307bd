// Limit::Impl: what a sluice::Limit holds (the parsed spec), shared by the limiters of
// src/api. Internal: the installed headers only name it.
#pragma once

#include "sluice/limit.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice {

struct Limit::Impl {
  spec::LimitSpec spec;
};

}  // namespace sluice
