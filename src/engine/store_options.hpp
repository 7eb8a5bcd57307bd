// The Redis backend's settings as the config gives them (`redis:`): what each event loop's
// backend::redis::Store is made with. Pure: the servers make the stores on their loops.
#pragma once

#include <optional>

#include "sluice/backend/redis/store.hpp"
#include "sluice/config/rule_set.hpp"

namespace sluice::engine {

// nullopt when no store is configured (no `redis:` url).
std::optional<backend::redis::StoreOptions> store_options(const config::RuleSet& rules);

}  // namespace sluice::engine
