// SharedLimiter: one limiter's one-word state in an atomic, decided by a CAS loop around the
// pure algorithm, so racing threads admit no more than one thread deciding in order would.
#include "sluice/core/shared_limiter.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "sluice/core/gcra.hpp"
#include "support/limiter.hpp"
#include "support/threads.hpp"

namespace sluice::core {
namespace {

using namespace test::units;

TEST(SharedLimiter, DecidesExactlyAsThePureAlgorithmOnOneThread) {
  const Gcra::Params p = Gcra::make(per_second(10), 4);
  SharedLimiter<Gcra> shared(p, 0);
  test::TestLimiter<Gcra> reference(p);
  for (std::int64_t t = 0; t <= 2000; t += 30) {
    for (int i = 0; i < 3; ++i) {
      const Decision a = shared.decide(ms(t));
      const Decision b = reference.at(ms(t));
      ASSERT_EQ(a.allowed, b.allowed) << t;
      ASSERT_EQ(a.retry_after, b.retry_after) << t;
    }
  }
  EXPECT_EQ(shared.state().tat, reference.state().tat);
}

TEST(SharedLimiter, RacingThreadsNeverAdmitMoreThanTheLimitPlusTheRate) {
  // GCRA at one per 10us with burst 99 (limit 100). Every thread walks the same clock,
  // 0..T in 1us steps, deciding at each step. Each admission moves the TAT one interval on
  // and needs TAT - DVT <= now <= T, so over [0, T] at most T / 10us + 100 pass, however the
  // threads interleave.
  constexpr int kThreads = 4;
  constexpr std::int64_t kSteps = 200'000;  // T = 200ms of virtual time
  const Gcra::Params p = Gcra::make(Rate{1, us(10)}, 99);
  SharedLimiter<Gcra> shared(p, 0);
  std::atomic<std::int64_t> admitted{0};
  test::on_threads(kThreads, [&](int) {
    std::int64_t mine = 0;
    for (std::int64_t step = 0; step < kSteps; ++step) {
      mine += shared.decide(us(step)).allowed ? 1 : 0;
    }
    admitted.fetch_add(mine);
  });
  const std::int64_t bound = (kSteps - 1) / 10 + 100;  // T = 199999us: 19999 + 100
  EXPECT_LE(admitted.load(), bound);
  // Demand is four times the supply, so the limiter is kept busy: most slots are used.
  EXPECT_GE(admitted.load(), bound / 2);
}

}  // namespace
}  // namespace sluice::core
