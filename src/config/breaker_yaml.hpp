// A route's `breaker:` and the top-level `stale_cache:` in YAML, both ways: read with every
// field checked and named in its error, and written back so that it loads to an equal config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>

#include "section.hpp"
#include "sluice/config/breaker_config.hpp"

namespace sluice::config::internal {

// The route's `breaker:` (nullopt: absent or wrong; the errors are in the section's list).
// `node` is the route's mapping (for `fallback.headers`, a mapping of any names); `proxies`: the
// route has an upstream (a breaker on a route that answers itself is refused).
std::optional<BreakerConfig> read_breaker(Section& route, const yaml::Node& node, bool proxies);

// `stale_cache: {max_bytes, max_entry}` into `out` (left as it is when absent).
void read_stale_cache(Section& top, StaleCacheLimits& out);

void emit_breaker(YAML::Emitter& out, const BreakerConfig& b);
void emit_stale_cache(YAML::Emitter& out, const StaleCacheLimits& limits);

}  // namespace sluice::config::internal
