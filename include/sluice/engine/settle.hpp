// Settling what a request's rules charge after its response (a rule's cost_from or count_if):
// the gateway hands the engine the response's status and head, and removes the cost headers.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "sluice/core/time.hpp"
#include "sluice/engine/outcome.hpp"

namespace sluice::engine {

// Whether `out` has rules to settle once its response head arrives.
bool settles(const Outcome& out);

// The headers `out`'s rules read their cost from (cost_from), before settle(): each is read,
// then left out of the response the client gets (the upstream's accounting is not the
// client's). The names live as long as the outcome's rules.
std::vector<std::string_view> cost_headers(const Outcome& out);

// A response header's value by name (case-insensitive), or nullopt when absent.
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view name)>;

// Charges each settling rule what the response says, less what admission reserved: cost_from's
// stated cost (a missing or malformed value: the reserve stands), nothing when count_if does
// not list `status`. Once: a second call does nothing. A request that never gets a response
// keeps its reserve.
void settle(Outcome& out, int status, const HeaderLookup& header, core::Nanos now);

}  // namespace sluice::engine
