// The whole embeddable API in one include: limits, decisions, the single and the keyed
// limiter, and the version. What `#include <sluice/sluice.hpp>` gives a program linked with
// libsluice (docs/library.md); includes only the standard library (C++17 or later).
#pragma once

#include "sluice/decision.hpp"
#include "sluice/keyed_limiter.hpp"
#include "sluice/limit.hpp"
#include "sluice/limiter.hpp"
#include "sluice/version.hpp"
