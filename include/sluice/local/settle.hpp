// Settling a cost after the fact on one key of a local table (a rule's cost_from or count_if,
// the check API's report): core::Settle applied under the key's slot lock.
#pragma once

#include <cstdint>

#include "sluice/local/table_limit.hpp"

namespace sluice::local {

// Charges `delta` more to `key` (negative: gives part of a reserve back), at `now` as the
// table's limit decides time. False when the algorithm cannot settle (check-config refuses
// such rules) or the key's bucket is full of leases.
bool settle(const AnyTable& table, const table::KeyHash& key, core::Nanos now, std::int64_t delta);

}  // namespace sluice::local
