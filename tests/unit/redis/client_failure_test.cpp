// The Redis client when the server misbehaves: frozen (SIGSTOP) -> timeouts, then recovery;
// slow -> late replies dropped on a live connection; killed -> fast failures, then a reconnect
// of its own when the server is back.
#include <gtest/gtest.h>

#include "redis/client_test_support.hpp"

namespace sluice::backend::redis::testing {
namespace {

// Resumes a paused server even when an assertion returns early, so teardown can kill it.
struct Thaw {
  const RedisServer& server;
  ~Thaw() { server.resume(); }
};

TEST(ClientFailure, AFrozenServerTimesCommandsOutThenTheClientRecovers) {
  RedisServer server;
  boost::asio::io_context io;
  ClientOptions o = options_for(server.url());
  o.timeout = 100 * kMs;
  Client client(io, o);
  ASSERT_TRUE(wait_for_pong(io, client));

  server.pause();
  Thaw thaw{server};
  Result r;
  const core::Nanos sent = clock::SteadyClock::read();
  client.command({"GET", "k"}, "k", capture(r));
  ASSERT_TRUE(run_until(io, [&] { return r.done(); }));
  ASSERT_NE(r.failure(), nullptr) << describe(r);
  EXPECT_EQ(r.failure()->kind, Failure::Kind::kTimeout) << describe(r);
  EXPECT_GE(r.at - sent, o.timeout);
  EXPECT_LT(r.at - sent, 5 * o.timeout);  // generous: the machine is shared
  EXPECT_GE(client.stats().timeouts, 1U);

  server.resume();
  ASSERT_TRUE(wait_for_pong(io, client));
  Result get = run_command(io, client, {"SET", "k", "back"}, "k");
  EXPECT_FALSE(get.failure()) << describe(get);
  run_for(io, std::chrono::milliseconds(50));
  EXPECT_EQ(r.calls, 1);
}

TEST(ClientFailure, LateRepliesOfTimedOutCommandsAreDroppedAndTheConnectionKept) {
  // hz 100: blocked commands time out on the server within 10 ms of their due time (at the
  // default hz 10, within 100 ms).
  RedisServer server({"--hz", "100"});
  boost::asio::io_context io;
  ClientOptions o = options_for(server.url());
  o.timeout = 400 * kMs;
  Client client(io, o);
  ASSERT_TRUE(wait_for_pong(io, client));
  // BLPOP on an empty list holds the commands behind it: the first reply comes at 300 ms (in
  // time), the others at 500 ms, past their 400 ms deadline but while the connection is still
  // alive (it read a reply 200 ms before).
  Result first;
  Result second;
  std::vector<Result> pings(3);
  client.command({"BLPOP", "empty", "0.3"}, "empty", capture(first));
  client.command({"BLPOP", "empty", "0.2"}, "empty", capture(second));
  for (auto& p : pings) client.command({"PING"}, {}, capture(p));
  ASSERT_TRUE(run_until(io, [&] {
    return std::all_of(pings.begin(), pings.end(), [](const Result& r) { return r.done(); });
  }));
  ASSERT_FALSE(first.failure()) << describe(first);
  EXPECT_EQ(first.reply().type, Reply::Type::kNil);
  ASSERT_NE(second.failure(), nullptr) << describe(second);
  EXPECT_EQ(second.failure()->kind, Failure::Kind::kTimeout);
  for (const auto& p : pings) {
    ASSERT_NE(p.failure(), nullptr) << describe(p);
    EXPECT_EQ(p.failure()->kind, Failure::Kind::kTimeout);
  }
  // The late replies are read and dropped; the next command gets its own.
  run_for(io, std::chrono::milliseconds(200));
  Result after = run_command(io, client, {"ECHO", "mine"});
  ASSERT_FALSE(after.failure()) << describe(after);
  EXPECT_EQ(after.reply().str, "mine");
  EXPECT_EQ(client.stats().reconnects, 0U);
  EXPECT_EQ(client.stats().timeouts, 4U);
  EXPECT_EQ(first.calls + second.calls, 2);
}

TEST(ClientFailure, AKilledServerFailsCommandsFastAndTheClientReconnectsWhenItIsBack) {
  RedisServer server;
  boost::asio::io_context io;
  Client client(io, options_for(server.url()));
  const Script script("return ARGV[1]");
  Result e1;
  client.eval(script, {"k"}, {"one"}, capture(e1));
  ASSERT_TRUE(run_until(io, [&] { return e1.done(); }));
  ASSERT_FALSE(e1.failure()) << describe(e1);
  EXPECT_EQ(client.stats().script_loads, 1U);

  server.stop();
  ASSERT_TRUE(run_until(io, [&] { return !client.connected(); }));
  for (int i = 0; i < 5; ++i) {
    Result r;
    const core::Nanos sent = clock::SteadyClock::read();
    client.command({"PING"}, {}, capture(r));
    ASSERT_TRUE(run_until(io, [&] { return r.done(); }));
    ASSERT_NE(r.failure(), nullptr);
    EXPECT_EQ(r.failure()->kind, Failure::Kind::kConnection) << describe(r);
    // No waiting for the deadline: the caller's failure policy answers at once.
    EXPECT_LT(r.at - sent, ClientOptions{}.timeout * 2);
    run_for(io, std::chrono::milliseconds(30));
  }

  server.restart();
  ASSERT_TRUE(wait_for_pong(io, client));
  EXPECT_TRUE(client.connected());
  EXPECT_GE(client.stats().reconnects, 1U);
  // The restarted server has no scripts: NOSCRIPT, SCRIPT LOAD and the retry stay invisible.
  Result e2;
  client.eval(script, {"k"}, {"two"}, capture(e2));
  ASSERT_TRUE(run_until(io, [&] { return e2.done(); }));
  ASSERT_FALSE(e2.failure()) << describe(e2);
  EXPECT_EQ(e2.reply().str, "two");
  EXPECT_EQ(client.stats().script_loads, 2U);
}

TEST(ClientFailure, NoServerAtAllFailsWithConnectionErrors) {
  const std::uint16_t port = free_port();
  boost::asio::io_context io;
  Client client(io, options_for("redis://127.0.0.1:" + std::to_string(port)));
  for (int i = 0; i < 3; ++i) {
    Result r = run_command(io, client, {"PING"});
    ASSERT_NE(r.failure(), nullptr);
    EXPECT_EQ(r.failure()->kind, Failure::Kind::kConnection);
    EXPECT_NE(r.failure()->message.find(std::to_string(port)), std::string::npos)
        << r.failure()->message;
  }
  EXPECT_FALSE(client.connected());
}

}  // namespace
}  // namespace sluice::backend::redis::testing
