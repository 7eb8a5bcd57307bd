// The Redis client's opening on every connection, against a real redis-server with an ACL user:
// AUTH user password and SELECT before any command; a refused AUTH fails the commands as a
// refused connect does, with Redis's words, and is counted; a server that wants AUTH from a
// client that has no password says so.
#include <gtest/gtest.h>

#include "redis/client_test_support.hpp"

namespace sluice::backend::redis::testing {
namespace {

constexpr const char* kPassword = "app-password-for-the-test";

class ClientAuth : public ::testing::Test {
 protected:
  // `default` may connect without a password (the test's own window); `app` needs one.
  RedisServer server_{{"--user", "app", "on", std::string(">") + kPassword, "~*", "&*", "+@all"}};
  boost::asio::io_context io_;

  ClientOptions options(std::string user, std::string password, std::int64_t db) const {
    ClientOptions o = options_for(server_.url());
    o.url.auth = StoreAuth{std::move(user), std::move(password)};
    o.url.db = db;
    return o;
  }
};

TEST_F(ClientAuth, AuthAndSelectComeBeforeTheFirstCommand) {
  Client client(io_, options("app", kPassword, 3));
  Result info = run_command(io_, client, {"CLIENT", "INFO"});
  ASSERT_FALSE(info.failure()) << describe(info);
  EXPECT_NE(info.reply().str.find(" db=3 "), std::string::npos) << info.reply().str;
  EXPECT_NE(info.reply().str.find(" user=app "), std::string::npos) << info.reply().str;
  EXPECT_EQ(client.stats().refused_connects, 0U);
  // And again after the server drops the connection: the opening comes first on every one.
  run_command(io_, client, {"CLIENT", "KILL", "USER", "app"});
  ASSERT_TRUE(wait_for_pong(io_, client));
  Result again = run_command(io_, client, {"CLIENT", "INFO"});
  ASSERT_FALSE(again.failure()) << describe(again);
  EXPECT_NE(again.reply().str.find(" db=3 "), std::string::npos) << again.reply().str;
  EXPECT_NE(again.reply().str.find(" user=app "), std::string::npos) << again.reply().str;
}

TEST_F(ClientAuth, AWrongPasswordFailsTheCommandsWithRedisWords) {
  Client client(io_, options("app", "wrong-password", 0));
  Result r = run_command(io_, client, {"SET", "k", "v"});
  ASSERT_NE(r.failure(), nullptr) << describe(r);
  EXPECT_EQ(r.failure()->kind, Failure::Kind::kConnection);
  EXPECT_EQ(r.failure()->message,
            "cannot connect to Redis at 127.0.0.1:" + std::to_string(server_.port()) +
                ": AUTH refused by Redis at 127.0.0.1:" + std::to_string(server_.port()) +
                ": WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(client.stats().refused_connects, 1U);
  EXPECT_FALSE(client.connected());
  // Nothing reached the server.
  EXPECT_EQ(server_.call({"EXISTS", "k"}).integer, 0);
}

TEST_F(ClientAuth, ADatabaseTheServerLacksIsRefusedAtSelect) {
  Client client(io_, options("app", kPassword, 99));
  Result r = run_command(io_, client, {"PING"});
  ASSERT_NE(r.failure(), nullptr) << describe(r);
  EXPECT_NE(r.failure()->message.find("SELECT refused by Redis at 127.0.0.1:"), std::string::npos)
      << r.failure()->message;
  EXPECT_NE(r.failure()->message.find("DB index is out of range"), std::string::npos)
      << r.failure()->message;
}

TEST(ClientAuthRequired, NoPasswordForAServerThatWantsOneSaysSo) {
  RedisServer server;  // started open, so that its start-up PING is answered; then closed
  ASSERT_EQ(server.call({"CONFIG", "SET", "requirepass", kPassword}).str, "OK");
  boost::asio::io_context io;
  Client client(io, options_for(server.url()));
  Result r = run_command(io, client, {"PING"});
  ASSERT_NE(r.failure(), nullptr) << describe(r);
  EXPECT_NE(r.failure()->message.find("wants AUTH (NOAUTH Authentication required.): give "
                                      "redis.password_file or password_env"),
            std::string::npos)
      << r.failure()->message;
  EXPECT_EQ(client.stats().refused_connects, 1U);
}

}  // namespace
}  // namespace sluice::backend::redis::testing
