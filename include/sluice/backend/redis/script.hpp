// Sluice's Redis script: src/backend/redis/lua/*.lua joined at build time, loaded into Redis
// once (SCRIPT LOAD) and called by its SHA1 (EVALSHA) for every batch of decisions.
#pragma once

#include <string_view>

namespace sluice::backend::redis {

std::string_view script_text();

}  // namespace sluice::backend::redis
