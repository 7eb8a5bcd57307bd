// Shared pieces of the Redis client's tests: collecting a command's outcome, and the option sets
// the tests use (timeouts long enough for a loaded machine, short enough for a fast suite).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "redis/redis_process.hpp"
#include "sluice/backend/redis/client.hpp"
#include "sluice/clock/clocks.hpp"

namespace sluice::backend::redis::testing {

inline constexpr core::Nanos kMs = core::kNanosPerMilli;

// One command's outcome and when it came; calls counts deliveries (must end at exactly 1).
struct Result {
  int calls = 0;
  Outcome outcome;
  core::Nanos at = 0;

  bool done() const { return calls > 0; }
  const Reply& reply() const { return std::get<Reply>(outcome); }
  const Failure* failure() const { return std::get_if<Failure>(&outcome); }
};

inline Callback capture(Result& r) {
  return [&r](Outcome o) {
    ++r.calls;
    r.outcome = std::move(o);
    r.at = clock::SteadyClock::read();
  };
}

inline std::string describe(const Result& r) {
  if (!r.done()) return "(no outcome)";
  if (const auto* f = r.failure()) {
    return "failure " + std::string(failure_kind_name(f->kind)) + ": " + f->message;
  }
  const Reply& rep = r.reply();
  switch (rep.type) {
    case Reply::Type::kError:
      return "error reply: " + rep.str;
    case Reply::Type::kInteger:
      return "integer " + std::to_string(rep.integer);
    case Reply::Type::kNil:
      return "nil";
    case Reply::Type::kArray:
      return "array of " + std::to_string(rep.elements.size());
    default:
      return "'" + rep.str + "'";
  }
}

inline ClientOptions options_for(const std::string& url) {
  ClientOptions o;
  o.url = parse_store_url(url).value();
  o.timeout = 500 * kMs;
  o.connect_timeout = 500 * kMs;
  o.reconnect_min = 10 * kMs;
  o.reconnect_max = 100 * kMs;
  return o;
}

// Sends one command and runs the loop until its outcome.
inline Result run_command(boost::asio::io_context& io, Client& client,
                          std::vector<std::string> args, std::string_view key = {}) {
  Result r;
  client.command(std::move(args), key, capture(r));
  EXPECT_TRUE(run_until(io, [&] { return r.done(); })) << "no outcome";
  return r;
}

// Sends PING until one succeeds (after a restart or a stall); false if none did in `limit`.
inline bool wait_for_pong(boost::asio::io_context& io, Client& client,
                          std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    Result r = run_command(io, client, {"PING"});
    if (!r.failure() && r.reply().str == "PONG") return true;
    run_for(io, std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace sluice::backend::redis::testing
