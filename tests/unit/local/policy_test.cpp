// Policies: several limits with their own keys decided as one request.
#include "sluice/local/policy.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace sluice::local {
namespace {

using core::kNanosPerMilli;
using core::kNanosPerSecond;

TableLimit limit(const char* spec) {
  auto s = spec::parse_limit_spec(spec);
  EXPECT_TRUE(s.ok()) << spec;
  auto t = make_table_limit(*s, 1 << 20);
  EXPECT_TRUE(t.ok()) << t.error();
  return *t;
}

std::vector<TableLimit> table_limits(std::initializer_list<const char*> specs) {
  std::vector<TableLimit> out;
  for (const char* s : specs) out.push_back(limit(s));
  return out;
}

TEST(Policy, AllMustPassAndADenialChargesNone) {
  // Global 5/s burst 5 and per-user 1/s burst 2. User u1 takes 2, its third is denied by the
  // per-user limit and must not spend a global token: u2..u4 still get the 3 left globally.
  Policy p(Combine::kAllMustPass,
           table_limits({"token-bucket:rate=5/s,burst=5", "token-bucket:rate=1/s,burst=2"}));
  auto ask = [&](std::string_view user) {
    std::array<std::string_view, 2> keys{"global", user};
    return p.decide(keys, 0, 1, 0).decision.allowed;
  };
  EXPECT_TRUE(ask("u1"));
  EXPECT_TRUE(ask("u1"));
  EXPECT_FALSE(ask("u1"));
  EXPECT_FALSE(ask("u1"));
  EXPECT_TRUE(ask("u2"));
  EXPECT_TRUE(ask("u3"));
  EXPECT_TRUE(ask("u4"));
  EXPECT_FALSE(ask("u5"));  // global now empty: 5 granted in all
}

TEST(Policy, DenialReportsTheLongestRetryAmongTheDenyingLimits) {
  Policy p(Combine::kAllMustPass,
           table_limits({"gcra:rate=10/s,burst=0", "gcra:rate=1/s,burst=0"}));
  std::array<std::string_view, 2> keys{"a", "a"};
  EXPECT_TRUE(p.decide(keys, 0, 1, 0).decision.allowed);
  const auto d = p.decide(keys, 0, 1, 0).decision;
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, kNanosPerSecond);  // the 1/s limit: a full second; 10/s: 100 ms
}

TEST(Policy, GlobalFirstThrottlesTheHeavyUserOnlyUnderPressure) {
  // Global 10/s burst 10; per-user 1/s burst 1. While the global bucket has tokens a heavy user
  // passes freely (10 at t=0); once it is empty, each user gets only its own bucket.
  Policy p(Combine::kFirstThatAllows,
           table_limits({"token-bucket:rate=10/s,burst=10", "token-bucket:rate=1/s,burst=1"}));
  auto ask = [&](std::string_view user) {
    std::array<std::string_view, 2> keys{"global", user};
    return p.decide(keys, 0, 1, 0);
  };
  for (int i = 0; i < 10; ++i) {
    auto d = ask("heavy");
    EXPECT_TRUE(d.decision.allowed);
    EXPECT_EQ(d.decided_by, 0);
  }
  auto eleventh = ask("heavy");
  EXPECT_TRUE(eleventh.decision.allowed);  // per-user bucket, untouched until now
  EXPECT_EQ(eleventh.decided_by, 1);
  EXPECT_FALSE(ask("heavy").decision.allowed);  // both empty for heavy
  EXPECT_TRUE(ask("light").decision.allowed);   // light still has its own token
}

TEST(Policy, ConcurrencyLeaseIsReturnedOnEveryPath) {
  Policy p(Combine::kAllMustPass, table_limits({"concurrency:limit=2"}));
  std::array<std::string_view, 1> keys{"backend"};
  auto a = p.decide(keys, 0, 1, 0);
  ASSERT_TRUE(a.decision.allowed);
  ASSERT_EQ(a.leases.size(), 1u);
  {
    auto b = p.decide(keys, 0, 1, 0);
    ASSERT_TRUE(b.decision.allowed);
    EXPECT_FALSE(p.decide(keys, 0, 1, 0).decision.allowed);  // 2 in flight
  }                                                          // b's lease released at scope exit
  EXPECT_TRUE(p.decide(keys, 0, 1, 0).decision.allowed);     // (and released again at once)
  try {
    auto c = p.decide(keys, 0, 1, 0);
    ASSERT_TRUE(c.decision.allowed);
    throw std::runtime_error("handler failed");
  } catch (const std::runtime_error&) {
  }
  auto d = p.decide(keys, 0, 1, 0);  // c was released by the exception's unwinding
  EXPECT_TRUE(d.decision.allowed);
  a.leases.front().release();  // early release; the destructor then does nothing
  a.leases.front().release();
  auto e = p.decide(keys, 0, 1, 0);
  EXPECT_TRUE(e.decision.allowed);
  EXPECT_FALSE(p.decide(keys, 0, 1, 0).decision.allowed);  // d and e hold both
}

TEST(Policy, ADeniedRequestGetsNoLeaseAndTakesNoPermit) {
  // Concurrency 1 plus a rate of 1/s with no burst: the second request is denied by the rate,
  // so the concurrency permit it would have taken stays free for another user.
  Policy p(Combine::kAllMustPass, table_limits({"concurrency:limit=1", "gcra:rate=1/s,burst=0"}));
  std::array<std::string_view, 2> k1{"c", "user1"};
  {
    auto first = p.decide(k1, 0, 1, 0);
    ASSERT_TRUE(first.decision.allowed);
  }
  auto second = p.decide(k1, 0, 1, 0);
  EXPECT_FALSE(second.decision.allowed);
  EXPECT_TRUE(second.leases.empty());
  std::array<std::string_view, 2> k2{"c", "user2"};
  EXPECT_TRUE(p.decide(k2, 0, 1, 0).decision.allowed);
}

TEST(Policy, ConcurrencyIsNeverExceededUnderFourThreads) {
  Policy p(Combine::kAllMustPass, table_limits({"concurrency:limit=3"}));
  std::atomic<int> in_flight{0};
  std::atomic<int> worst{0};
  auto worker = [&] {
    std::array<std::string_view, 1> keys{"k"};
    for (int i = 0; i < 20000; ++i) {
      auto d = p.decide(keys, 0, 1, 0);
      if (!d.decision.allowed) continue;
      const int now = in_flight.fetch_add(1) + 1;
      int w = worst.load();
      while (now > w && !worst.compare_exchange_weak(w, now)) {
      }
      in_flight.fetch_sub(1);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  EXPECT_LE(worst.load(), 3);
  EXPECT_GE(worst.load(), 1);
}

TEST(Policy, EmptyKeySkipsItsLimit) {
  Policy p(Combine::kAllMustPass, table_limits({"gcra:rate=1/s,burst=0"}));
  std::array<std::string_view, 1> none{""};
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(p.decide(none, 0, 1, 0).decision.allowed);
}

TEST(Policy, SlidingLogCannotBeATableLimit) {
  auto s = spec::parse_limit_spec("sliding-log:limit=5,window=1s");
  ASSERT_TRUE(s.ok());
  auto t = make_table_limit(*s, 1 << 20);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().find("sliding-window"), std::string::npos);
}

TEST(Policy, PoliciesSharingLimitsInOppositeOrdersNeitherDeadlockNorOverAdmit) {
  // Two policies hold the same two tables in opposite orders (A,B and B,A) and race on the
  // same keys. Slots are held together or not at all, so nothing deadlocks, and limit A
  // (gcra 1000/s, limit 10) admits at most 10 + 1000 * 0.05 s = 60 (+1 at the edge).
  auto ab = table_limits({"gcra:rate=1000/s,burst=9", "gcra:rate=2000/s,burst=19"});
  Policy p1(Combine::kAllMustPass, ab);
  Policy p2(Combine::kAllMustPass, {ab[1], ab[0]});
  std::atomic<core::Nanos> clock{0};
  std::atomic<int> admitted{0};
  auto worker = [&](Policy& p) {
    for (;;) {
      const core::Nanos now = clock.fetch_add(1000);
      if (now > 50 * kNanosPerMilli) break;
      std::array<std::string_view, 2> keys{"x", "x"};
      if (p.decide(keys, now, 1, 0).decision.allowed) admitted.fetch_add(1);
    }
  };
  std::thread a(worker, std::ref(p1)), b(worker, std::ref(p2));
  a.join();
  b.join();
  EXPECT_LE(admitted.load(), 61);
  EXPECT_GE(admitted.load(), 40);
}

TEST(Policy, ABusySlotOnlyWaitsItsTurnAndNeverDenies) {
  // Four threads race on one key through two limits held in opposite orders, far above the
  // load (a million requests a second each). Every slot they want is often held by another
  // thread; each request waits its turn and passes: 4 x 20000 decisions, 0 denials, for
  // all-must-pass and first-that-allows alike. (Before, a busy slot denied after 1000
  // retries, naming no rule.)
  for (const Combine combine : {Combine::kAllMustPass, Combine::kFirstThatAllows}) {
    auto ab = table_limits(
        {"token-bucket:rate=1000000/s,burst=1000000", "gcra:rate=1000000/s,burst=999999"});
    Policy p1(combine, ab);
    Policy p2(combine, {ab[1], ab[0]});
    std::atomic<int> denied{0};
    auto worker = [&](Policy& p) {
      for (int i = 0; i < 20000; ++i) {
        std::array<std::string_view, 2> keys{"same", "same"};
        if (!p.decide(keys, 0, 1, 0).decision.allowed) denied.fetch_add(1);
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(worker, std::ref(t % 2 == 0 ? p1 : p2));
    for (auto& t : threads) t.join();
    EXPECT_EQ(denied.load(), 0) << (combine == Combine::kAllMustPass ? "all" : "first");
  }
}

TEST(Policy, TheSameLimitTwiceIsRefused) {
  auto a = table_limits({"gcra:rate=1/s,burst=0"});
  EXPECT_THROW(Policy(Combine::kAllMustPass, {a[0], a[0]}), std::invalid_argument);
}

}  // namespace
}  // namespace sluice::local
