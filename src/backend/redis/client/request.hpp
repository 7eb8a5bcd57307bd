// A command on its way through the client: what to send, whom to tell, by when, and how many
// redirects and script loads it has been through. Owned by exactly one place at a time (a
// connection's pending queue, the retry queue, a script-load wait list), so it completes once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/backend/redis/reply.hpp"
#include "sluice/core/time.hpp"

namespace sluice::backend::redis::detail {

struct Request {
  std::vector<std::string> args;  // the whole command, kept for redirects and retries
  std::string wire;               // or the whole command already in RESP (then args is empty)
  std::string sha1;               // evalsha: the script's SHA1
  Callback done;
  core::Nanos deadline = 0;  // steady-clock instant; the callback gets kTimeout past it
  std::uint16_t slot = 0;
  bool routed = false;    // cluster: `slot` picks the node (else any node will do)
  bool evalsha = false;   // sha1's script: NOSCRIPT loads it and retries
  bool compact = false;   // an array of integers comes back as Reply::integers
  bool internal = false;  // the client's own (CLUSTER SLOTS, SCRIPT LOAD): raw replies, no stats
  std::uint8_t redirects = 0;
  std::uint8_t reloads = 0;
};

using RequestPtr = std::unique_ptr<Request>;

}  // namespace sluice::backend::redis::detail
