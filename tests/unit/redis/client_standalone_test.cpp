// The Redis client against one real redis-server: replies of every type, pipelining order,
// binary-safe arguments, error replies, transparent script loading, limits and close().
#include <gtest/gtest.h>

#include "redis/client_test_support.hpp"

namespace sluice::backend::redis::testing {
namespace {

class ClientStandalone : public ::testing::Test {
 protected:
  RedisServer server_;
  boost::asio::io_context io_;
};

TEST_F(ClientStandalone, RepliesOfEveryType) {
  Client client(io_, options_for(server_.url()));
  Result set = run_command(io_, client, {"SET", "k", "v"}, "k");
  ASSERT_FALSE(set.failure()) << describe(set);
  EXPECT_EQ(set.reply().type, Reply::Type::kStatus);
  EXPECT_EQ(set.reply().str, "OK");

  Result get = run_command(io_, client, {"GET", "k"}, "k");
  EXPECT_EQ(get.reply().type, Reply::Type::kString);
  EXPECT_EQ(get.reply().str, "v");

  Result missing = run_command(io_, client, {"GET", "nothing"}, "nothing");
  EXPECT_EQ(missing.reply().type, Reply::Type::kNil);

  Result incr = run_command(io_, client, {"INCRBY", "n", "41"}, "n");
  EXPECT_EQ(incr.reply().type, Reply::Type::kInteger);
  EXPECT_EQ(incr.reply().integer, 41);

  run_command(io_, client, {"RPUSH", "l", "a", "b"}, "l");
  Result range = run_command(io_, client, {"LRANGE", "l", "0", "-1"}, "l");
  ASSERT_EQ(range.reply().type, Reply::Type::kArray);
  ASSERT_EQ(range.reply().elements.size(), 2U);
  EXPECT_EQ(range.reply().elements[1].str, "b");

  EXPECT_TRUE(client.connected());
  EXPECT_EQ(client.stats().commands, 6U);
  EXPECT_EQ(client.stats().replies, 6U);
  EXPECT_EQ(client.stats().failures, 0U);
}

TEST_F(ClientStandalone, ManyCommandsFromOneTurnComeBackInOrder) {
  Client client(io_, options_for(server_.url()));
  constexpr int kCount = 2000;
  std::vector<int> order;
  std::vector<Result> results(2 * kCount);
  bool submitting = true;
  bool called_inside_submit = false;
  for (int i = 0; i < kCount; ++i) {
    const std::string key = "key:" + std::to_string(i);
    client.command({"SET", key, "value:" + std::to_string(i)}, key, [&, i](Outcome o) {
      called_inside_submit |= submitting;
      order.push_back(2 * i);
      results[2 * i].outcome = std::move(o);
      ++results[2 * i].calls;
    });
    client.command({"GET", key}, key, [&, i](Outcome o) {
      called_inside_submit |= submitting;
      order.push_back(2 * i + 1);
      results[2 * i + 1].outcome = std::move(o);
      ++results[2 * i + 1].calls;
    });
  }
  submitting = false;
  ASSERT_TRUE(run_until(io_, [&] { return order.size() == 2U * kCount; }));
  EXPECT_FALSE(called_inside_submit);
  for (int i = 0; i < 2 * kCount; ++i) {
    ASSERT_EQ(order[i], i);
    ASSERT_EQ(results[i].calls, 1);
    ASSERT_FALSE(results[i].failure()) << describe(results[i]);
  }
  EXPECT_EQ(results[2 * 1234 + 1].reply().str, "value:1234");
}

TEST_F(ClientStandalone, ArgumentsAreBinarySafe) {
  Client client(io_, options_for(server_.url()));
  const std::string key("k\0\r\n{x}\xff", 9);
  std::string value("\r\n$3\r\n*1\0", 10);
  for (int i = 0; i < 256; ++i) value.push_back(static_cast<char>(i));
  const std::string big(3 * 1024 * 1024 + 7, '\x01');  // more than one read and one write

  ASSERT_FALSE(run_command(io_, client, {"SET", key, value}, key).failure());
  Result get = run_command(io_, client, {"GET", key}, key);
  EXPECT_EQ(get.reply().str, value);
  EXPECT_EQ(server_.call({"GET", key}).str, value);

  ASSERT_FALSE(run_command(io_, client, {"SET", "big", big}, "big").failure());
  Result got = run_command(io_, client, {"GET", "big"}, "big");
  EXPECT_EQ(got.reply().str.size(), big.size());
  EXPECT_TRUE(got.reply().str == big);
}

TEST_F(ClientStandalone, AnErrorReplyComesBackAndTheConnectionStaysUsable) {
  Client client(io_, options_for(server_.url()));
  run_command(io_, client, {"SET", "text", "abc"}, "text");
  Result incr = run_command(io_, client, {"INCR", "text"}, "text");
  ASSERT_FALSE(incr.failure()) << describe(incr);
  EXPECT_EQ(incr.reply().type, Reply::Type::kError);
  EXPECT_EQ(incr.reply().str, "ERR value is not an integer or out of range");

  Result unknown = run_command(io_, client, {"NOSUCHCOMMAND", "x"});
  EXPECT_TRUE(unknown.reply().is_error());
  EXPECT_NE(unknown.reply().str.find("unknown command"), std::string::npos);

  Result ping = run_command(io_, client, {"PING"});
  EXPECT_EQ(ping.reply().str, "PONG");
  EXPECT_EQ(client.stats().reconnects, 0U);
  EXPECT_EQ(client.stats().failures, 0U);
}

TEST_F(ClientStandalone, EvalLoadsTheScriptAndReloadsItAfterScriptFlush) {
  Client client(io_, options_for(server_.url()));
  const Script script("return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}");
  EXPECT_EQ(script.sha1(), server_.call({"SCRIPT", "LOAD", script.text()}).str);
  server_.call({"SCRIPT", "FLUSH"});

  auto eval = [&](const std::string& key) {
    Result r;
    client.eval(script, {key}, {"arg"}, capture(r));
    EXPECT_TRUE(run_until(io_, [&] { return r.done(); }));
    return r;
  };
  Result first = eval("a");
  ASSERT_FALSE(first.failure()) << describe(first);
  ASSERT_EQ(first.reply().type, Reply::Type::kArray) << describe(first);
  EXPECT_EQ(first.reply().elements[0].str, "a");
  EXPECT_EQ(first.reply().elements[1].str, "arg");
  EXPECT_EQ(first.reply().elements[2].integer, 1);
  EXPECT_EQ(client.stats().script_loads, 1U);

  Result second = eval("a");
  EXPECT_EQ(second.reply().elements[2].integer, 2);
  EXPECT_EQ(client.stats().script_loads, 1U);  // cached now

  run_command(io_, client, {"SCRIPT", "FLUSH"});
  // A burst of calls that all meet NOSCRIPT: one SCRIPT LOAD, every call retried once.
  std::vector<Result> burst(50);
  for (auto& r : burst) client.eval(script, {"b"}, {"x"}, capture(r));
  ASSERT_TRUE(run_until(io_, [&] {
    return std::all_of(burst.begin(), burst.end(), [](const Result& r) { return r.done(); });
  }));
  for (std::size_t i = 0; i < burst.size(); ++i) {
    ASSERT_EQ(burst[i].calls, 1);
    ASSERT_FALSE(burst[i].failure()) << describe(burst[i]);
    EXPECT_EQ(burst[i].reply().elements[2].integer, static_cast<long long>(i + 1));
  }
  EXPECT_EQ(client.stats().script_loads, 2U);
}

TEST_F(ClientStandalone, AScriptErrorIsAnErrorReply) {
  Client client(io_, options_for(server_.url()));
  const Script broken("return redis.call('INCR')");
  Result r;
  client.eval(broken, {"k"}, {}, capture(r));
  ASSERT_TRUE(run_until(io_, [&] { return r.done(); }));
  ASSERT_FALSE(r.failure()) << describe(r);
  EXPECT_TRUE(r.reply().is_error()) << describe(r);
  const Script unparsable("this is not lua");
  Result u;
  client.eval(unparsable, {"k"}, {}, capture(u));
  ASSERT_TRUE(run_until(io_, [&] { return u.done(); }));
  ASSERT_FALSE(u.failure()) << describe(u);
  EXPECT_TRUE(u.reply().is_error());
  EXPECT_NE(u.reply().str.find("Error compiling script"), std::string::npos) << u.reply().str;
}

TEST_F(ClientStandalone, BeyondMaxPendingCommandsFailOverloadedAtOnce) {
  ClientOptions o = options_for(server_.url());
  o.max_pending = 4;
  Client client(io_, o);
  std::vector<Result> results(10);
  for (auto& r : results) client.command({"PING"}, {}, capture(r));
  ASSERT_TRUE(run_until(io_, [&] {
    return std::all_of(results.begin(), results.end(), [](const Result& r) { return r.done(); });
  }));
  int overloaded = 0;
  for (const auto& r : results) {
    if (r.failure() != nullptr) {
      EXPECT_EQ(r.failure()->kind, Failure::Kind::kOverloaded);
      ++overloaded;
    }
  }
  EXPECT_EQ(overloaded, 6);
}

TEST_F(ClientStandalone, CloseFailsWhatIsWaitingAndEverythingAfter) {
  Client client(io_, options_for(server_.url()));
  ASSERT_TRUE(wait_for_pong(io_, client));
  Result waiting;
  client.command({"PING"}, {}, capture(waiting));
  client.close();
  EXPECT_EQ(waiting.calls, 1);  // inside close(), exactly once
  ASSERT_NE(waiting.failure(), nullptr);
  EXPECT_EQ(waiting.failure()->kind, Failure::Kind::kConnection);

  Result after;
  client.command({"PING"}, {}, capture(after));
  EXPECT_FALSE(after.done());  // never inside command()
  ASSERT_TRUE(run_until(io_, [&] { return after.done(); }));
  EXPECT_EQ(after.failure()->kind, Failure::Kind::kConnection);
  EXPECT_FALSE(client.connected());
  run_for(io_, std::chrono::milliseconds(20));
  EXPECT_EQ(waiting.calls, 1);
  EXPECT_EQ(after.calls, 1);
}

TEST_F(ClientStandalone, DestroyingTheClientFailsWhatIsWaiting) {
  Result waiting;
  {
    Client client(io_, options_for(server_.url()));
    client.command({"PING"}, {}, capture(waiting));
  }
  EXPECT_EQ(waiting.calls, 1);
  EXPECT_EQ(waiting.failure()->kind, Failure::Kind::kConnection);
  run_for(io_, std::chrono::milliseconds(20));  // stale handlers find nothing to call
  EXPECT_EQ(waiting.calls, 1);
}

}  // namespace
}  // namespace sluice::backend::redis::testing
