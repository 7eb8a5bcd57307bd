// `sluice replay --store redis://…`: a trace's requests decided by the Redis script at the
// trace's virtual instants, block by block, so the script is checked against the same
// reference decisions as the core. Runs its own event loop; blocks until each block is done.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/backend/redis/client.hpp"
#include "sluice/backend/redis/script_codec.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis {

struct ReplayRequest {
  core::Nanos now = 0;
  std::string key;
  std::int64_t cost = 1;
};

class ReplayStore {
 public:
  // Requests are decided against every spec (all must pass), each key with its own states,
  // under a key prefix unique to this run.
  // `run`: what makes this run's keys its own (the caller's pid and wall time, say), so a replay
  // never meets another's states (they expire on their own).
  ReplayStore(const StoreUrl& url, const std::vector<spec::LimitSpec>& specs, core::Nanos max_wait,
              std::string_view run);
  ~ReplayStore();

  // Decisions in the order of `block`; an error names what failed (connection, a Redis error
  // reply). Keys on different cluster slots go as separate, pipelined script calls.
  core::Expected<std::vector<core::Decision>> decide(const std::vector<ReplayRequest>& block);

 private:
  boost::asio::io_context io_;
  std::unique_ptr<Client> client_;
  Script script_;
  bool cluster_ = false;
  std::vector<ScriptLimit> limits_;
  // Per limit: its calendar (a calendar window: the trace's time is Unix time), else null.
  std::vector<const core::Calendar*> calendars_;
  core::Nanos max_wait_ = 0;
  std::string prefix_;
};

}  // namespace sluice::backend::redis
