// Settling what a request's rules charge after its response (a rule's cost_from or count_if):
// the gateway hands the engine the response's status and head (Loop::settle), and removes the
// cost headers.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "sluice/engine/outcome.hpp"

namespace sluice::engine {

// Whether `out` has rules to settle once its response head arrives.
bool settles(const Outcome& out);

// The headers `out`'s rules read their cost from (cost_from), before Loop::settle: each is
// read, then left out of the response the client gets (the upstream's accounting is not the
// client's). The names live as long as the outcome's rules.
std::vector<std::string_view> cost_headers(const Outcome& out);

// A response header's value by name (case-insensitive), or nullopt when absent.
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view name)>;

}  // namespace sluice::engine
