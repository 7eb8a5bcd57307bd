// The real Redis script (every Lua module, as the daemon sends it) run by EVAL on a real
// redis-server at given instants: what the script tests compare with the local backend.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redis/redis_process.hpp"
#include "sluice/backend/redis/script.hpp"
#include "sluice/backend/redis/script_codec.hpp"

namespace sluice::backend::redis::testing {

class ScriptRunner {
 public:
  // One decision of `cost` for `key` under `limit`, by the script at the instant `at` (as
  // Redis's clock; `at` is Unix time for a calendar window).
  core::Decision decide(const ScriptLimit& limit, const std::string& key, core::Nanos at,
                        std::int64_t cost = 1) {
    ScriptBatch batch(ScriptTime{false, at});
    const int l = batch.add_limit(limit);
    batch.add_request(RequestKind::kDecide, cost, 0, {{l, batch.add_key(key)}});
    const std::vector<std::string> keys = batch.keys();
    std::vector<std::string> cmd = {"EVAL", std::string(script_text()),
                                    std::to_string(keys.size())};
    cmd.insert(cmd.end(), keys.begin(), keys.end());
    const std::vector<std::string> args = batch.args();
    cmd.insert(cmd.end(), args.begin(), args.end());
    auto answers = decode_outcome(Outcome{server_.call(cmd)}, batch.limits_per_request());
    EXPECT_TRUE(answers.ok()) << answers.error();
    if (!answers.ok()) return core::overflowed();
    return answers->front().combined;
  }

  // The raw value the script keeps under `key` ("" when there is none).
  std::string stored(const std::string& key) { return server_.call({"GET", key}).str; }

 private:
  RedisServer server_;
};

}  // namespace sluice::backend::redis::testing
