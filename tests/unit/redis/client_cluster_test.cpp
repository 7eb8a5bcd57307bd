// The Redis client against a real 3-master Redis Cluster: key slots as Redis computes them,
// routing by slot from one seed, scripts loaded per node, and a live slot migration followed
// through ASK (during) and MOVED (after) without one failed command.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <mutex>
#include <thread>

#include "redis/client_test_support.hpp"
#include "sluice/backend/redis/key_slot.hpp"

namespace sluice::backend::redis::testing {
namespace {

class ClientCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new RedisCluster(); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(cluster_, nullptr) << "the cluster did not start"; }

  static RedisCluster* cluster_;
};

RedisCluster* ClientCluster::cluster_ = nullptr;

TEST_F(ClientCluster, KeySlotsAgreeWithClusterKeyslot) {
  const std::vector<std::string> keys = {"123456789",
                                         "{user1000}.following",
                                         "foo{}{bar}",
                                         "foo{{bar}}zap",
                                         "foo{bar}{zap}",
                                         "a",
                                         "",
                                         std::string("bin\0\xff{t}", 8),
                                         "sluice:{k42}:0"};
  for (const auto& k : keys) {
    const Reply r = cluster_->server(0).call({"CLUSTER", "KEYSLOT", k});
    ASSERT_EQ(r.type, Reply::Type::kInteger) << r.str;
    EXPECT_EQ(key_slot(k), r.integer) << k;
  }
}

TEST_F(ClientCluster, CommandsReachTheOwnerOfTheirSlotFromOneSeed) {
  boost::asio::io_context io;
  Client client(io, options_for(cluster_->url(1)));
  constexpr int kKeys = 300;
  std::vector<Result> sets(kKeys);
  std::vector<Result> gets(kKeys);
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "spread:" + std::to_string(i);
    client.command({"SET", key, "v" + std::to_string(i)}, key, capture(sets[i]));
    client.command({"GET", key}, key, capture(gets[i]));
  }
  ASSERT_TRUE(run_until(io, [&] {
    return std::all_of(gets.begin(), gets.end(), [](const Result& r) { return r.done(); });
  }));
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_FALSE(sets[i].failure()) << describe(sets[i]);
    ASSERT_EQ(sets[i].reply().str, "OK") << describe(sets[i]);
    ASSERT_EQ(gets[i].reply().str, "v" + std::to_string(i)) << describe(gets[i]);
  }
  // Every key is on the node that owns its slot, as Redis itself says.
  for (int i = 0; i < kKeys; i += 37) {
    const std::string key = "spread:" + std::to_string(i);
    const std::size_t owner = cluster_->owner(key_slot(key));
    EXPECT_EQ(cluster_->server(owner).call({"GET", key}).str, "v" + std::to_string(i));
  }
  EXPECT_GE(client.stats().topology_refreshes, 1U);
  EXPECT_TRUE(client.connected());

  // With the map known, nothing is redirected any more.
  const auto moved = client.stats().moved;
  std::vector<Result> again(kKeys);
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "spread:" + std::to_string(i);
    client.command({"GET", key}, key, capture(again[i]));
  }
  ASSERT_TRUE(run_until(io, [&] {
    return std::all_of(again.begin(), again.end(), [](const Result& r) { return r.done(); });
  }));
  for (int i = 0; i < kKeys; ++i) ASSERT_EQ(again[i].reply().str, "v" + std::to_string(i));
  EXPECT_EQ(client.stats().moved, moved);
  EXPECT_EQ(client.stats().failures, 0U);
}

TEST_F(ClientCluster, ScriptsAreLoadedOnEachNodeThatNeedsThem) {
  boost::asio::io_context io;
  Client client(io, options_for(cluster_->url()));
  ASSERT_TRUE(wait_for_pong(io, client));
  ASSERT_TRUE(run_until(io, [&] { return client.stats().topology_refreshes > 0; }));
  for (std::size_t i = 0; i < RedisCluster::kMasters; ++i) {
    cluster_->server(i).call({"SCRIPT", "FLUSH"});
  }
  const Script script("return redis.call('INCR', KEYS[1])");
  // One key per node: find tags whose slots land on each master.
  std::vector<std::string> keys(RedisCluster::kMasters);
  for (int tag = 0; std::any_of(keys.begin(), keys.end(), [](auto& k) { return k.empty(); });
       ++tag) {
    const std::string key = "{s" + std::to_string(tag) + "}:n";
    auto& slot_key = keys[cluster_->owner(key_slot(key))];
    if (slot_key.empty()) slot_key = key;
  }
  std::vector<Result> results;
  results.reserve(2 * keys.size());
  for (int round = 0; round < 2; ++round) {
    for (const auto& key : keys) {
      results.emplace_back();
      client.eval(script, {key}, {}, capture(results.back()));
    }
  }
  ASSERT_TRUE(run_until(io, [&] {
    return std::all_of(results.begin(), results.end(), [](const Result& r) { return r.done(); });
  }));
  for (std::size_t i = 0; i < results.size(); ++i) {
    ASSERT_FALSE(results[i].failure()) << describe(results[i]);
    EXPECT_EQ(results[i].reply().integer, i < keys.size() ? 1 : 2) << describe(results[i]);
  }
  EXPECT_EQ(client.stats().script_loads, RedisCluster::kMasters);
}

// Runs `fn` on the loop's thread and waits for it: the client is only ever touched there.
template <class Fn>
auto on_loop(boost::asio::io_context& io, Fn fn) {
  std::packaged_task<decltype(fn())()> task(std::move(fn));
  auto result = task.get_future();
  boost::asio::post(io, [&task] { task(); });
  return result.get();
}

TEST_F(ClientCluster, ASlotMigrationIsFollowedThroughAskThenMoved) {
  const std::string tag = "{migrating}";
  const std::uint16_t slot = key_slot(tag);
  const std::size_t from = cluster_->owner(slot);
  const std::size_t to = (from + 1) % RedisCluster::kMasters;
  RedisServer& source = cluster_->server(from);
  RedisServer& target = cluster_->server(to);
  source.call({"SET", tag + ":a", "va"});

  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  ClientOptions options = options_for(cluster_->url(1));
  options.timeout = 3000 * kMs;  // room for the TRYAGAIN retries below on a loaded machine
  Client client(io, options);

  // The load: rounds of GET (a key that moves), INCR (a key whose count must never skip or
  // repeat), SET (a new key in the slot) and a GET elsewhere, one round in flight at a time.
  std::atomic<int> rounds{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> stopped{false};
  std::mutex problems_mutex;
  std::vector<std::string> problems;
  auto problem = [&](std::string what) {
    std::lock_guard lock(problems_mutex);
    problems.push_back(std::move(what));
  };
  long long counter = 0;
  std::function<void()> round = [&] {
    if (stop) {
      stopped = true;
      return;
    }
    auto left = std::make_shared<int>(4);
    auto next = [&, left] {
      if (--*left == 0) {
        ++rounds;
        round();
      }
    };
    const int n = rounds.load();
    client.command({"GET", tag + ":a"}, tag, [&, next](Outcome o) {
      const auto* r = std::get_if<Reply>(&o);
      if (r == nullptr || r->str != "va") problem("GET a: " + describe(Result{1, o, 0}));
      next();
    });
    client.command({"INCR", tag + ":counter"}, tag, [&, next](Outcome o) {
      const auto* r = std::get_if<Reply>(&o);
      if (r == nullptr || r->type != Reply::Type::kInteger || r->integer != counter + 1) {
        problem("INCR: " + describe(Result{1, o, 0}));
      } else {
        counter = r->integer;
      }
      next();
    });
    client.command({"SET", tag + ":new" + std::to_string(n), "x"}, tag, [&, next](Outcome o) {
      const auto* r = std::get_if<Reply>(&o);
      if (r == nullptr || r->str != "OK") problem("SET new: " + describe(Result{1, o, 0}));
      next();
    });
    const std::string other = "elsewhere:" + std::to_string(n % 50);
    client.command({"SET", other, "y"}, other, [&, next](Outcome o) {
      const auto* r = std::get_if<Reply>(&o);
      if (r == nullptr || r->str != "OK") problem("SET other: " + describe(Result{1, o, 0}));
      next();
    });
  };
  std::thread loop([&] { io.run(); });
  // Stops the load, closes the client on its loop and joins, however the test ends.
  auto shutdown = [&] {
    if (!loop.joinable()) return;
    stop = true;
    on_loop(io, [&] {
      client.close();
      return 0;
    });
    work.reset();
    loop.join();
  };
  struct Joiner {
    std::function<void()> fn;
    ~Joiner() { fn(); }
  } joiner{shutdown};
  auto wait_rounds = [&](int more) {
    const int goal = rounds.load() + more;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (rounds.load() < goal && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return rounds.load() >= goal;
  };
  auto stats = [&] { return on_loop(io, [&] { return client.stats(); }); };
  boost::asio::post(io, [&] { round(); });

  EXPECT_TRUE(wait_rounds(50));
  const std::string s = std::to_string(slot);
  EXPECT_EQ(target.call({"CLUSTER", "SETSLOT", s, "IMPORTING", cluster_->node_id(from)}).str, "OK");
  EXPECT_EQ(source.call({"CLUSTER", "SETSLOT", s, "MIGRATING", cluster_->node_id(to)}).str, "OK");
  EXPECT_TRUE(wait_rounds(20));
  const auto before_ask = stats();

  // Move every key of the slot; from here on the source answers ASK for them.
  const Reply keys = source.call({"CLUSTER", "GETKEYSINSLOT", s, "1000"});
  std::vector<std::string> migrate = {
      "MIGRATE", "127.0.0.1", std::to_string(target.port()), "", "0", "5000", "KEYS"};
  for (const auto& k : keys.elements) migrate.push_back(k.str);
  const Reply migrated = source.call(migrate);
  EXPECT_EQ(migrated.str, "OK") << migrated.str;
  EXPECT_TRUE(wait_rounds(30));
  const auto after_ask = stats();
  EXPECT_GT(after_ask.ask, before_ask.ask);
  EXPECT_EQ(after_ask.moved, before_ask.moved);  // ASK leaves the map alone

  // A multi-key command whose keys are split (one moved, one nowhere) cannot run mid-migration:
  // the target answers TRYAGAIN, and the client retries until the migration is over.
  std::atomic<bool> split_done{false};
  Result split;
  boost::asio::post(io, [&] {
    client.command({"MGET", tag + ":a", tag + ":never"}, tag, [&](Outcome o) {
      split.outcome = std::move(o);
      ++split.calls;
      split_done = true;
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(split_done) << describe(split);

  // The slot now belongs to the target, on every node; the source answers MOVED.
  for (const std::size_t i : {to, from, (to + 1) % RedisCluster::kMasters}) {
    EXPECT_EQ(
        cluster_->server(i).call({"CLUSTER", "SETSLOT", s, "NODE", cluster_->node_id(to)}).str,
        "OK");
  }
  EXPECT_TRUE(wait_rounds(30));
  const auto after_moved = stats();
  const auto until_split = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!split_done && std::chrono::steady_clock::now() < until_split) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(split_done);
  ASSERT_FALSE(split.failure()) << describe(split);
  ASSERT_EQ(split.reply().type, Reply::Type::kArray) << describe(split);
  EXPECT_EQ(split.reply().elements[0].str, "va");
  EXPECT_EQ(split.reply().elements[1].type, Reply::Type::kNil);
  EXPECT_GT(after_moved.moved, after_ask.moved);

  stop = true;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!stopped && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto final_stats = stats();
  shutdown();

  EXPECT_TRUE(stopped);
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_EQ(final_stats.failures, 0U);
  EXPECT_EQ(target.call({"GET", tag + ":a"}).str, "va");
  EXPECT_EQ(target.call({"GET", tag + ":counter"}).str, std::to_string(counter));
  EXPECT_EQ(cluster_->owner(slot), to);
}

// Last in the suite: it kills and restarts a master (which comes back with its slots).
TEST_F(ClientCluster, ALostMasterFailsOnlyItsSlotsFastAndIsUsedAgainWhenBack) {
  boost::asio::io_context io;
  Client client(io, options_for(cluster_->url()));
  // A key on each master.
  std::vector<std::string> keys(RedisCluster::kMasters);
  for (int tag = 0; std::any_of(keys.begin(), keys.end(), [](auto& k) { return k.empty(); });
       ++tag) {
    const std::string key = "{down" + std::to_string(tag) + "}";
    auto& owned = keys[cluster_->owner(key_slot(key))];
    if (owned.empty()) owned = key;
  }
  for (const auto& k : keys) {
    Result r = run_command(io, client, {"SET", k, "v"}, k);
    ASSERT_FALSE(r.failure()) << describe(r);
  }
  const auto refreshes = client.stats().topology_refreshes;

  const std::size_t victim = 1;
  cluster_->server(victim).stop();
  // Well within the cluster's node timeout (2 s): the other masters still serve their slots.
  ASSERT_TRUE(run_until(io, [&] { return client.stats().topology_refreshes > refreshes; }));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Result r;
    const core::Nanos sent = clock::SteadyClock::read();
    client.command({"GET", keys[i]}, keys[i], capture(r));
    ASSERT_TRUE(run_until(io, [&] { return r.done(); }));
    if (i == victim) {
      ASSERT_NE(r.failure(), nullptr) << describe(r);
      EXPECT_EQ(r.failure()->kind, Failure::Kind::kConnection) << describe(r);
      EXPECT_LT(r.at - sent, options_for("redis://x").timeout);
    } else {
      ASSERT_FALSE(r.failure()) << describe(r);
      EXPECT_EQ(r.reply().str, "v");
    }
  }

  cluster_->server(victim).restart();  // same port and nodes.conf: same node, same slots
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool back = false;
  while (!back && std::chrono::steady_clock::now() < until) {
    Result r = run_command(io, client, {"SET", keys[victim], "again"}, keys[victim]);
    back = r.failure() == nullptr && r.reply().str == "OK";
    if (!back) run_for(io, std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(back);
  EXPECT_GE(client.stats().reconnects, 1U);
  cluster_->wait_ok();
}

}  // namespace
}  // namespace sluice::backend::redis::testing
