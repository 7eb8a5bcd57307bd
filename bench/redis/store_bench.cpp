// The Redis backend without HTTP in front: decisions per second one event loop gets from a
// real redis-server, exact and leased, beside one EVALSHA per decision on the same client.
//
//   sluice_redis_store_bench --port P --script bench/decision/token_bucket.lua
//                            [--seconds 3] [--inflight 256] [--keys 1000]
//
// Each mode keeps `inflight` decisions outstanding on one loop (as a busy gateway loop does)
// over `keys` random keys of a token bucket far above the load, and prints a markdown row:
// decisions/s and Redis script calls per decision. The baseline sends Spring Cloud Gateway's
// token bucket (bench/decision/token_bucket.lua) once per decision, pipelined the same way.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "sluice/backend/redis/store.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace {

using namespace sluice;
namespace redis = sluice::backend::redis;

struct Args {
  int port = 6379;
  std::string script;
  double seconds = 3;
  int inflight = 256;
  int keys = 1000;
  std::string only;  // baseline | exact | leased: run one mode (for profiling)
  int batch = 0;     // requests per script call (0: the store's default)
};

struct Result {
  double per_second = 0;
  double calls_per_decision = 0;
};

// Runs `issue(done)` keeping `inflight` outstanding until the deadline; counts completions.
template <class Issue>
std::uint64_t drive(boost::asio::io_context& io, const Args& a, Issue issue) {
  std::uint64_t completed = 0;
  int outstanding = 0;
  bool running = true;
  std::function<void()> one;
  one = [&] {
    ++outstanding;
    issue([&] {
      ++completed;
      --outstanding;
      if (running) {
        one();
      } else if (outstanding == 0) {
        io.stop();  // the client's own timers would keep run() going
      }
    });
  };
  boost::asio::steady_timer stop(io, std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::duration<double>(a.seconds)));
  stop.async_wait([&](const boost::system::error_code&) { running = false; });
  for (int i = 0; i < a.inflight; ++i) one();
  io.run();
  return completed;
}

Result store_mode(const Args& a, std::int64_t lease) {
  boost::asio::io_context io(1);
  redis::StoreOptions o;
  o.client.url = *redis::parse_store_url("redis://127.0.0.1:" + std::to_string(a.port));
  o.client.timeout = 2 * core::kNanosPerSecond;
  if (a.batch > 0) o.max_batch = static_cast<std::size_t>(a.batch);
  redis::Store store(io, o);
  redis::RemoteLimitOptions lo;
  lo.lease = lease;
  lo.lease_ttl = core::kNanosPerSecond;
  auto limit = *redis::RemoteLimit::make(
      "bench", *spec::parse_limit_spec("token-bucket:rate=100000000/s,burst=100000000"), lo);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> pick(0, a.keys - 1);
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t n = drive(io, a, [&](std::function<void()> done) {
    redis::Query q;
    q.items.push_back({limit, "k" + std::to_string(pick(rng)), 0});
    store.decide(std::move(q), [done = std::move(done)](redis::Answer) { done(); });
  });
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto calls = store.stats().scripts.load();
  return {static_cast<double>(n) / secs,
          n ? static_cast<double>(calls) / static_cast<double>(n) : 0};
}

Result evalsha_mode(const Args& a) {
  std::ifstream f(a.script);
  std::stringstream text;
  text << f.rdbuf();
  boost::asio::io_context io(1);
  redis::ClientOptions o;
  o.url = *redis::parse_store_url("redis://127.0.0.1:" + std::to_string(a.port));
  o.timeout = 2 * core::kNanosPerSecond;
  redis::Client client(io, o);
  const redis::Script script(text.str());
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> pick(0, a.keys - 1);
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t n = drive(io, a, [&](std::function<void()> done) {
    client.eval(script, {"bench:" + std::to_string(pick(rng))}, {"100000000", "100000000", "1"},
                [done = std::move(done)](redis::Outcome) { done(); });
  });
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {static_cast<double>(n) / secs, 1.0};
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--port")
      a.port = std::stoi(v);
    else if (k == "--script")
      a.script = v;
    else if (k == "--seconds")
      a.seconds = std::stod(v);
    else if (k == "--inflight")
      a.inflight = std::stoi(v);
    else if (k == "--keys")
      a.keys = std::stoi(v);
    else if (k == "--only")
      a.only = v;
    else if (k == "--batch")
      a.batch = std::stoi(v);
    else {
      std::fprintf(stderr, "store_bench: unknown argument %s\n", k.c_str());
      return 2;
    }
  }
  if (a.script.empty()) {
    std::fprintf(stderr,
                 "store_bench: --script FILE (bench/decision/token_bucket.lua) is required\n");
    return 2;
  }
  auto want = [&](const char* mode) { return a.only.empty() || a.only == mode; };
  const Result base = want("baseline") ? evalsha_mode(a) : Result{1, 0};
  const Result exact = want("exact") ? store_mode(a, 0) : Result{};
  const Result leased = want("leased") ? store_mode(a, 100) : Result{};
  std::printf(
      "| mode (one loop, %d in flight, %d keys) | decisions/s | script calls per decision | vs "
      "baseline |\n",
      a.inflight, a.keys);
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| baseline: one EVALSHA per decision | %.0f | %.3f | 1.00x |\n", base.per_second,
              base.calls_per_decision);
  std::printf("| Sluice exact (batched per loop turn) | %.0f | %.4f | %.2fx |\n", exact.per_second,
              exact.calls_per_decision, exact.per_second / base.per_second);
  std::printf("| Sluice leased (lease 100) | %.0f | %.4f | %.2fx |\n", leased.per_second,
              leased.calls_per_decision, leased.per_second / base.per_second);
  return 0;
}
