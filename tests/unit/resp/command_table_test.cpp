// The command table and the connection commands, answered as Redis 7.0 answers them (the
// error texts were checked against a real redis-server 7.0).
#include "command_table.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "sluice/config/loader.hpp"

namespace sluice::server::resp {
namespace {

// A config with one rule, `api`: 10 per hour, so a cost of 3 leaves 7.
config::RuleSet api_rules() {
  auto loaded = config::load_config_text(
      "rules:\n  api: {limit: \"fixed-window:limit=10,window=1h\", key: client_ip}\n", "t.yaml");
  return *loaded.rules;
}

class Dispatch : public ::testing::Test {
 protected:
  std::string run(std::vector<std::string> argv) {
    std::vector<std::string_view> args(argv.begin(), argv.end());
    std::string out;
    proto::resp::ReplyWriter w(out, client_.protocol);
    engine::Outcome outcome;
    Context ctx{*state_, client_, w, 5 * core::kNanosPerSecond, loop_, outcome};
    dispatch(ctx, args);
    return out;
  }

  core::ManualClock clock_{0};
  RespServerOptions options_ = [this] {
    RespServerOptions o;
    o.clocks = {&clock_, &clock_};
    return o;
  }();
  engine::Engine engine_{api_rules(), 0};
  boost::asio::io_context io_;
  engine::Loop loop_{engine_, io_};
  std::unique_ptr<ServerState> state_ = std::make_unique<ServerState>(engine_, options_, 0);
  ClientState client_ = [] {
    ClientState c;
    c.id = 7;
    return c;
  }();
};

TEST_F(Dispatch, AnswersUnknownCommandsWithRedisText) {
  EXPECT_EQ(run({"foo", "a", "b"}),
            "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
  EXPECT_EQ(run({"FOO"}), "-ERR unknown command 'FOO', with args beginning with: \r\n");
  // Arguments are listed up to 128 bytes, the first one cut to fit.
  EXPECT_EQ(
      run({"x", std::string(200, 'y'), "z"}),
      "-ERR unknown command 'x', with args beginning with: '" + std::string(128, 'y') + "' \r\n");
  EXPECT_EQ(run({"x", "a\r\nb"}),
            "-ERR unknown command 'x', with args beginning with: 'a  b' \r\n");
}

TEST_F(Dispatch, ChecksArityWithRedisText) {
  EXPECT_EQ(run({"CL.THROTTLE", "k", "1", "1"}),
            "-ERR wrong number of arguments for 'cl.throttle' command\r\n");
  EXPECT_EQ(run({"cl.throttle", "k", "1", "1", "1", "1", "1"}),
            "-ERR wrong number of arguments for 'cl.throttle' command\r\n");
  EXPECT_EQ(run({"ping", "a", "b"}), "-ERR wrong number of arguments for 'ping' command\r\n");
  EXPECT_EQ(run({"client"}), "-ERR wrong number of arguments for 'client' command\r\n");
  EXPECT_EQ(run({"client", "setname"}),
            "-ERR wrong number of arguments for 'client|setname' command\r\n");
  EXPECT_EQ(run({"client", "foo"}), "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n");
}

TEST_F(Dispatch, NamesAreCaseInsensitive) {
  EXPECT_EQ(run({"PiNg"}), "+PONG\r\n");
  EXPECT_EQ(run({"cl.THROTTLE", "k", "0", "1", "10"}), "*5\r\n:0\r\n:1\r\n:0\r\n:-1\r\n:10\r\n");
  EXPECT_EQ(run({"Cl.Throttle", "k", "0", "1", "10"}), "*5\r\n:1\r\n:1\r\n:0\r\n:10\r\n:10\r\n");
}

TEST_F(Dispatch, ThrottleErrorsAreRedisCells) {
  EXPECT_EQ(run({"CL.THROTTLE", "k", "x", "1", "1"}),
            "-Cell error: Couldn't parse as integer: x\r\n");
}

TEST_F(Dispatch, AnswersConnectionCommands) {
  EXPECT_EQ(run({"PING", "hi"}), "$2\r\nhi\r\n");
  EXPECT_EQ(run({"ECHO", "x"}), "$1\r\nx\r\n");
  EXPECT_EQ(run({"CLIENT", "GETNAME"}), "$-1\r\n");
  EXPECT_EQ(run({"CLIENT", "SETNAME", "app"}), "+OK\r\n");
  EXPECT_EQ(run({"client", "getname"}), "$3\r\napp\r\n");
  EXPECT_EQ(run({"CLIENT", "SETNAME", "a b"}),
            "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  EXPECT_EQ(run({"CLIENT", "ID"}), ":7\r\n");
  EXPECT_EQ(run({"SELECT", "0"}), "+OK\r\n");
  EXPECT_EQ(run({"SELECT", "1"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(run({"SELECT", "x"}), "-ERR value is not an integer or out of range\r\n");
  EXPECT_FALSE(client_.close_after_reply);
  EXPECT_EQ(run({"QUIT"}), "+OK\r\n");
  EXPECT_TRUE(client_.close_after_reply);
}

TEST_F(Dispatch, HelloSwitchesToResp3) {
  EXPECT_EQ(run({"HELLO", "4"}), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(run({"HELLO", "x"}), "-ERR Protocol version is not an integer or out of range\r\n");
  EXPECT_EQ(run({"HELLO", "3", "FOO"}), "-ERR Syntax error in HELLO option 'FOO'\r\n");
  const std::string three = run({"HELLO", "3", "SETNAME", "me"});
  EXPECT_EQ(three.substr(0, 4), "%7\r\n");
  EXPECT_NE(three.find("$5\r\nproto\r\n:3\r\n"), std::string::npos);
  EXPECT_NE(three.find("$2\r\nid\r\n:7\r\n"), std::string::npos);
  EXPECT_EQ(client_.protocol, 3);
  EXPECT_EQ(client_.name, "me");
  EXPECT_EQ(run({"CLIENT", "GETNAME"}), "$2\r\nme\r\n");
  EXPECT_EQ(run({"CLIENT", "SETNAME", ""}), "+OK\r\n");
  EXPECT_EQ(run({"CLIENT", "GETNAME"}), "_\r\n");
  EXPECT_EQ(run({"COMMAND", "DOCS"}), "%0\r\n");
  EXPECT_EQ(run({"HELLO", "2"}).substr(0, 5), "*14\r\n");
  EXPECT_EQ(client_.protocol, 2);
}

TEST_F(Dispatch, AnswersServerCommands) {
  EXPECT_EQ(run({"COMMAND", "COUNT"}), ":19\r\n");  // with SLUICE.PEEK, RESET and REPORT
  EXPECT_EQ(run({"COMMAND", "DOCS"}), "*0\r\n");
  EXPECT_EQ(run({"COMMAND", "INFO", "nope"}), "*1\r\n$-1\r\n");
  const std::string prefix = "*1\r\n*10\r\n$11\r\ncl.throttle\r\n:-5\r\n";
  EXPECT_EQ(run({"COMMAND", "INFO", "cl.throttle"}).substr(0, prefix.size()), prefix);
  EXPECT_EQ(run({"CONFIG", "GET", "save"}), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
  EXPECT_EQ(run({"CONFIG", "GET", "nothing"}), "*0\r\n");
  const std::string info = run({"INFO"});
  EXPECT_NE(info.find("# Server\r\nredis_version:7.0.0\r\n"), std::string::npos);
  EXPECT_NE(info.find("throttle_keys:"), std::string::npos);
  EXPECT_EQ(run({"INFO", "clients"}).find("# Server"), std::string::npos);
}

TEST_F(Dispatch, SluiceCheckDecidesAConfiguredRule) {
  // At 5 s: the hour's window ends in 3595 s.
  EXPECT_EQ(run({"SLUICE.CHECK", "api", "ok", "3"}), "*5\r\n:0\r\n:10\r\n:7\r\n:-1\r\n:3595\r\n");
  EXPECT_EQ(run({"SLUICE.CHECK", "api", "ok", "8"}), "*5\r\n:1\r\n:10\r\n:7\r\n:3595\r\n:3595\r\n");
  EXPECT_EQ(run({"SLUICE.CHECK", "web", "k"}), "-ERR unknown rule 'web'\r\n");
  EXPECT_EQ(run({"SLUICE.CHECK", "api", "k", "0"}),
            "-ERR invalid cost '0': must be a positive integer\r\n");
  EXPECT_EQ(run({"SLUICE.CHECK", "api", "k", "-1"}),
            "-ERR invalid cost '-1': must be a positive integer\r\n");
}

TEST_F(Dispatch, TransactionsAndAuthSayWhatRedisSays) {
  EXPECT_EQ(run({"EXEC"}), "-ERR EXEC without MULTI\r\n");
  EXPECT_EQ(run({"DISCARD"}), "-ERR DISCARD without MULTI\r\n");
  EXPECT_EQ(run({"AUTH", "secret"}),
            "-ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?\r\n");
  EXPECT_EQ(run({"SLUICE.RELEASE", "l-0000000000000001"}), ":0\r\n");
}

}  // namespace
}  // namespace sluice::server::resp
