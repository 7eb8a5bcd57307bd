// Real redis-server processes for the Redis backend's tests: one server (RedisServer) or a
// 3-master cluster (RedisCluster) on free 127.0.0.1 ports, always killed, even when a test fails.
#pragma once

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sluice/backend/redis/endpoint.hpp"
#include "sluice/backend/redis/reply.hpp"

namespace sluice::backend::redis::testing {

inline constexpr const char* kRedisServer = "/usr/bin/redis-server";
inline constexpr const char* kRedisCli = "/usr/bin/redis-cli";

// True when 127.0.0.1:port can be bound right now.
inline bool port_free(unsigned port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// A port that is free, and whose cluster bus port (port + 10000) is free too. Ports are taken
// from 20000-29999, away from the kernel's ephemeral range, starting at a per-process offset so
// test binaries running side by side rarely try the same ones.
inline std::uint16_t free_port() {
  static std::atomic<unsigned> next{static_cast<unsigned>(::getpid()) * 7919U % 10000U};
  for (int tries = 0; tries < 10000; ++tries) {
    const unsigned port = 20000 + next.fetch_add(1) % 10000;
    if (port_free(port) && port_free(port + 10000)) return static_cast<std::uint16_t>(port);
  }
  throw std::runtime_error("no free port for redis-server");
}

inline Reply to_reply(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::kArray;
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(to_reply(r->element[i]));
      break;
    default:
      out.type = Reply::Type::kNil;
      break;
  }
  return out;
}

// One blocking call on a fresh connection (hiredis's synchronous API): for test setup and
// inspection only, never on a path under test.
inline Reply call(std::uint16_t port, const std::vector<std::string>& args,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
  const auto secs = timeout.count() / 1000;
  const timeval tv{static_cast<time_t>(secs),
                   static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  std::unique_ptr<redisContext, void (*)(redisContext*)> ctx(
      redisConnectWithTimeout("127.0.0.1", port, tv), redisFree);
  if (!ctx || ctx->err != 0) {
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port) + ": " +
                             (ctx ? ctx->errstr : "out of memory"));
  }
  redisSetTimeout(ctx.get(), tv);
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* raw = static_cast<redisReply*>(
      redisCommandArgv(ctx.get(), static_cast<int>(args.size()), argv.data(), lens.data()));
  if (raw == nullptr) {
    throw std::runtime_error("no reply from 127.0.0.1:" + std::to_string(port) + ": " +
                             ctx->errstr);
  }
  Reply out = to_reply(raw);
  freeReplyObject(raw);
  return out;
}

// Runs a program to its end, its output in `log`; its exit status.
inline int run_program(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A redis-server on a free 127.0.0.1 port, in its own temporary directory, persistence off.
// Killed (SIGKILL) by stop() and by the destructor; the child also dies with the test process.
class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra_args = {})
      : port_(free_port()), extra_args_(std::move(extra_args)) {
    char dir[] = "/tmp/sluice-redis-XXXXXX";
    if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = dir;
    start();
  }
  ~RedisServer() {
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const std::string& dir() const { return dir_; }
  Endpoint endpoint() const { return Endpoint{"127.0.0.1", port_}; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  // Kills the server at once (no shutdown, no save), as a crash would.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // Starts it again on the same port and directory; returns once it answers PING.
  void restart() {
    stop();
    start();
  }

  // Freezes (SIGSTOP) and thaws (SIGCONT) the process: the kernel keeps its sockets open and
  // accepting, so clients see silence rather than a closed connection.
  void pause() const { ::kill(pid_, SIGSTOP); }
  void resume() const { ::kill(pid_, SIGCONT); }

  Reply call(const std::vector<std::string>& args) const { return testing::call(port_, args); }

 private:
  void start() {
    std::vector<std::string> argv = {kRedisServer, "--port",       std::to_string(port_),
                                     "--bind",     "127.0.0.1",    "--save",
                                     "",           "--appendonly", "no",
                                     "--dir",      dir_,           "--daemonize",
                                     "no",         "--logfile",    ""};
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    const std::string log = dir_ + "/redis.log";
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    pid_ = pid;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("redis-server on port " + std::to_string(port_) +
                                 " exited at start: " + read_log());
      }
      try {
        const Reply r = call({"PING"});
        if (r.type == Reply::Type::kStatus && r.str == "PONG") return;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("redis-server on port " + std::to_string(port_) +
                             " did not answer PING: " + read_log());
  }

  std::string read_log() const {
    std::ifstream in(dir_ + "/redis.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::uint16_t port_;
  std::vector<std::string> extra_args_;
  std::string dir_;
  pid_t pid_ = -1;
};

// A Redis Cluster of three masters and no replicas, made with redis-cli --cluster create;
// ready (cluster_state:ok on every node) when the constructor returns.
class RedisCluster {
 public:
  static constexpr std::size_t kMasters = 3;

  RedisCluster() {
    for (std::size_t i = 0; i < kMasters; ++i) {
      // nodes.conf lives in each server's own directory, so the name need not be unique.
      servers_.push_back(std::make_unique<RedisServer>(
          std::vector<std::string>{"--cluster-enabled", "yes", "--cluster-config-file",
                                   "nodes.conf", "--cluster-node-timeout", "2000"}));
    }
    std::vector<std::string> create = {kRedisCli, "--cluster", "create"};
    for (const auto& s : servers_) create.push_back("127.0.0.1:" + std::to_string(s->port()));
    create.insert(create.end(), {"--cluster-replicas", "0", "--cluster-yes"});
    const std::string log = servers_[0]->dir() + "/cluster-create.log";
    if (run_program(create, log) != 0) {
      std::ifstream in(log);
      std::stringstream s;
      s << in.rdbuf();
      throw std::runtime_error("redis-cli --cluster create failed: " + s.str());
    }
    wait_ok();
    for (const auto& s : servers_) {
      ids_.push_back(s->call({"CLUSTER", "MYID"}).str);
    }
  }

  RedisServer& server(std::size_t i) { return *servers_[i]; }
  std::uint16_t port(std::size_t i) const { return servers_[i]->port(); }
  std::vector<std::uint16_t> ports() const {
    std::vector<std::uint16_t> out;
    for (const auto& s : servers_) out.push_back(s->port());
    return out;
  }
  const std::string& node_id(std::size_t i) const { return ids_[i]; }

  // "redis-cluster://127.0.0.1:p1,...", the seeds being the first `seeds` nodes.
  std::string url(std::size_t seeds = kMasters) const {
    std::string out = "redis-cluster://";
    for (std::size_t i = 0; i < seeds && i < servers_.size(); ++i) {
      if (i > 0) out += ',';
      out += "127.0.0.1:" + std::to_string(servers_[i]->port());
    }
    return out;
  }

  // Which node (index) owns `slot`, as node `asked` sees it (CLUSTER SLOTS).
  std::size_t owner(std::uint16_t slot, std::size_t asked = 0) const {
    const Reply r = servers_[asked]->call({"CLUSTER", "SLOTS"});
    for (const auto& range : r.elements) {
      if (slot >= range.elements[0].integer && slot <= range.elements[1].integer) {
        const auto port = range.elements[2].elements[1].integer;
        for (std::size_t i = 0; i < servers_.size(); ++i) {
          if (servers_[i]->port() == port) return i;
        }
      }
    }
    throw std::runtime_error("slot " + std::to_string(slot) + " has no owner");
  }

  // Until every node says cluster_state:ok (and agrees on all 16384 slots being served).
  void wait_ok(std::chrono::seconds limit = std::chrono::seconds(20)) const {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      bool all = true;
      for (const auto& s : servers_) {
        const Reply info = s->call({"CLUSTER", "INFO"});
        if (info.str.find("cluster_state:ok") == std::string::npos ||
            info.str.find("cluster_slots_ok:16384") == std::string::npos) {
          all = false;
          break;
        }
      }
      if (all) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("the cluster did not reach cluster_state:ok");
  }

 private:
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::vector<std::string> ids_;
};

// Runs `io` until `done()` holds or `limit` passes; false on the latter.
template <class Pred>
bool run_until(boost::asio::io_context& io, Pred done,
               std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    if (io.stopped()) io.restart();
    if (io.run_one_for(std::chrono::milliseconds(5)) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return true;
}

// Runs `io` for `d`, whatever happens.
inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (io.stopped()) io.restart();
    if (io.run_one_until(until) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace sluice::backend::redis::testing
