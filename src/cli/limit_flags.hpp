// The flags `sluice replay` and `sluice simulate` share: --limit SPEC against a trace, and
// --mode / --max-wait, read with the same checks and messages (DESIGN.md "sluice replay").
#pragma once

#include <string>

#include "sluice/core/expected.hpp"
#include "sluice/core/time.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::cli {

// The caller's patience from --mode and --max-wait: 0 in reject mode, --max-wait (default
// forever) in wait mode. Errors name the flag.
core::Expected<core::Nanos> read_max_wait(const std::string& mode, const std::string& max_wait);

// One limit, refused when it cannot decide a trace in this mode (a concurrency limit; a window
// in wait mode). `what` names where it was given ("--limit", "FILE:LINE: limit").
core::Expected<spec::LimitSpec> read_limit(const std::string& text, bool wait,
                                           const std::string& what);

}  // namespace sluice::cli
