// A rule's top keys on the admin listener (docs/admin-api.md, "Top keys"): the query checked,
// the engine's TopKeys turned into JSON. No sketch here: it lives in the engine.
//
//   GET /v1/rules/{name}/top?by=denied|requests&n=20
//     200 {"rule","by","window_seconds","capacity","keys":[{"key","requests","denied"}]}
//     400 for a bad `by` or `n` (or another parameter), 404 for an unknown rule
#pragma once

#include <string_view>

#include "admin_reply.hpp"
#include "sluice/core/time.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::server {

Reply top_keys(const engine::Engine& engine, std::string_view rule, std::string_view query,
               core::Nanos now);

}  // namespace sluice::server
