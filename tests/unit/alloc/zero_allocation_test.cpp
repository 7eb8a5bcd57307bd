// The engine's entry point allocates nothing on the heap for a request whose rules are all
// local, admitted or refused, nor for one whose Redis rule has a leased permit at hand: every operator new of this test binary is counted (a counting
// allocator replacing the global one), and the count across many decisions must be 0.
// g++ 12 pairs the replaced operator delete with inlined `new` expressions elsewhere and
// warns of a mismatch that is not one: both sides here are malloc/free.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "common/limit_fields.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/engine/loop.hpp"

namespace {

// Counted only while a test says so, on its own thread.
thread_local bool counting = false;
thread_local std::size_t allocations = 0;

}  // namespace

void* operator new(std::size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (counting) ++allocations;
  const std::size_t align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace sluice::engine {
namespace {

using server::limit_fields;
using server::LimitFields;
using server::retry_after;

// Heap allocations made by `f`, on this thread.
template <class F>
std::size_t allocations_of(F&& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations;
}

config::RuleSet load(const std::string& yaml) {
  auto loaded = config::load_config_text(yaml, "zero.yaml");
  EXPECT_TRUE(loaded.rules.has_value()) << loaded.errors.front().format();
  return *loaded.rules;
}

// A route with the kinds of rule a gateway has: per client, per API key (a key of two parts,
// hashed where they stand), a global delay rule, a concurrency limit and a dry-run rule.
const char* kConfig = R"(listen: 127.0.0.1:8080
trusted_proxies: [10.0.0.0/8]
upstreams:
  app: {servers: [127.0.0.1:8081]}
routes:
  - name: api
    match: {path_prefix: /api/}
    upstream: app
    rules: [per-ip, per-key, paced, in-flight, shadow]
rules:
  per-ip: {limit: "token-bucket:rate=100/s,burst=50", key: client_ip}
  per-key: {limit: "fixed-window:limit=200,window=1m", key: [header:X-Api-Key, method]}
  paced: {limit: "gcra:rate=1000/s,burst=100", key: const:all, action: delay, max_wait: 1ms}
  in-flight: {limit: "concurrency:limit=10", key: client_ip}
  shadow: {limit: "sliding-window:limit=5,window=1s", key: client_ip, action: dry-run}
)";

struct Request {
  std::vector<Header> headers{{"Host", "example.com"},
                              {"X-Api-Key", "k-123"},
                              {"X-Forwarded-For", "198.51.100.7:5555, 10.0.0.2"}};
  RequestView view() const {
    return RequestView{"GET", "example.com", "/api/orders", "page=2", "10.1.1.1", headers};
  }
};

TEST(ZeroAllocation, ALocalRouteDecidesWithoutTheHeapAdmittedOrRefused) {
  Engine engine(load(kConfig), 0);
  boost::asio::io_context io;
  Loop loop(engine, io);
  Request r;
  Outcome out;
  LimitFields fields;
  std::string head;
  head.reserve(4096);
  // The first decision may size what it keeps (the loop's snapshot); after that, none.
  loop.decide(r.view(), 0, out);
  out.reset();
  std::size_t allowed = 0, denied = 0;
  const std::size_t n = allocations_of([&] {
    for (int i = 0; i < 300; ++i) {
      if (loop.decide(r.view(), i * 1000, out) == Progress::kPending) std::abort();
      (out.verdict == Verdict::kAllow ? allowed : denied) += 1;
      // What a frontend does with it: the rate-limit fields into its own head buffer.
      head.clear();
      limit_fields(out, fields);
      const auto draft =
          i % 2 ? proto::http::RateLimitDraft::k11 : proto::http::RateLimitDraft::k12;
      proto::http::append_ratelimit_fields(head, fields, {true, true, draft}, retry_after(out));
      out.reset();
    }
  });
  EXPECT_EQ(n, 0u);
  EXPECT_GT(allowed, 0u);  // both paths were taken
  EXPECT_GT(denied, 0u);
}

TEST(ZeroAllocation, TheDecisionServiceAndClThrottleDecideWithoutTheHeap) {
  Engine engine(load(kConfig), 0);
  Outcome out;
  engine.decide(RuleAsk{"per-ip", "203.0.113.9", 1}, 0, out);
  engine.decide(ThrottleAsk{"user:1", 4, 1, 60, 1}, 0, out);
  std::size_t denied = 0;
  const std::size_t n = allocations_of([&] {
    for (int i = 0; i < 200; ++i) {
      engine.decide(RuleAsk{"per-ip", "203.0.113.9", 1}, i, out);
      denied += out.verdict == Verdict::kDeny;
      engine.decide(ThrottleAsk{"user:1", 4, 1, 60, 1}, i, out);
      denied += out.verdict == Verdict::kDeny;
    }
  });
  EXPECT_EQ(n, 0u);
  EXPECT_GT(denied, 0u);
}

// A redis-server on a free 127.0.0.1 port for one test, killed at its end.
class RedisServer {
 public:
  RedisServer() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::close(fd);
    std::string port = std::to_string(port_);
    std::vector<std::string> args{"redis-server", "--port", port,           "--bind", "127.0.0.1",
                                  "--save",       "",       "--appendonly", "no"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t quiet;  // its log lines are not the test's
    ::posix_spawn_file_actions_init(&quiet);
    ::posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    if (::posix_spawn(&pid_, "/usr/bin/redis-server", &quiet, nullptr, argv.data(), environ) != 0) {
      pid_ = 0;
    }
    ::posix_spawn_file_actions_destroy(&quiet);
    for (int i = 0; i < 500 && !answers(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~RedisServer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  int port() const { return port_; }
  bool answers() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    return ok;
  }

 private:
  int port_ = 0;
  pid_t pid_ = 0;
};

TEST(ZeroAllocation, ALeasedPermitAtHandIsAnsweredInDecideWithoutTheHeap) {
  // The pool holds permits (one take of 1000 made): each request is answered from it within
  // decide(), kDone, no Redis call, no callback, nothing allocated.
  RedisServer redis;
  ASSERT_TRUE(redis.answers());
  Engine engine(load("listen: 127.0.0.1:8080\nredis:\n  url: redis://127.0.0.1:" +
                     std::to_string(redis.port()) + R"(
routes:
  - name: leased
    match: {path_prefix: /}
    respond: {status: 200}
    rules: [leased]
rules:
  leased:
    limit: "token-bucket:rate=1000/s,burst=1000"
    key: client_ip
    storage: redis
    lease: 1000
    lease_ttl: 1h
)"),
                0);
  boost::asio::io_context io;
  Loop loop(engine, io);
  Request r;
  Outcome out;
  ASSERT_EQ(loop.decide(r.view(), 0, out), Progress::kPending);  // the first take
  bool done = false;
  loop.async_complete(out, [&done] { done = true; });
  for (int i = 0; i < 500 && !done; ++i) io.run_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(done);
  ASSERT_EQ(out.verdict, Verdict::kAllow);
  out.reset();
  ASSERT_EQ(loop.decide(r.view(), 0, out), Progress::kDone);  // sizes what the outcome keeps
  out.reset();
  std::size_t allowed = 0;
  const std::size_t n = allocations_of([&] {
    for (int i = 0; i < 300; ++i) {
      if (loop.decide(r.view(), 0, out) != Progress::kDone) std::abort();
      allowed += out.verdict == Verdict::kAllow;
      out.reset();
    }
  });
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(allowed, 300u);
  // The 999 the take gave are spent: the next asks Redis again.
  for (int i = 0; i < 698; ++i) {
    ASSERT_EQ(loop.decide(r.view(), 0, out), Progress::kDone);
    out.reset();
  }
  EXPECT_EQ(loop.decide(r.view(), 0, out), Progress::kPending);
  done = false;
  loop.async_complete(out, [&done] { done = true; });
  for (int i = 0; i < 500 && !done; ++i) io.run_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(done);
}

TEST(ZeroAllocation, TheCountingAllocatorSeesAnAllocation) {
  // The count is real: a decision that builds a Redis query would be seen (here, a string).
  std::string* s = nullptr;
  EXPECT_EQ(allocations_of([&] { s = new std::string(100, 'x'); }), 2u);
  delete s;
}

}  // namespace
}  // namespace sluice::engine
