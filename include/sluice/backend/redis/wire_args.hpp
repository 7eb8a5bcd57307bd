// A command's arguments already in RESP, as the script codec writes a batch: bulk strings one
// after another, so that a batch is encoded once into one buffer and sent as it stands.
#pragma once

#include <cstddef>
#include <string>

namespace sluice::backend::redis {

struct WireArgs {
  std::string wire;       // "$<len>\r\n<bytes>\r\n" per argument
  std::size_t count = 0;  // how many arguments `wire` holds
};

}  // namespace sluice::backend::redis
