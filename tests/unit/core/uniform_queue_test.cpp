// Sentinel's ThrottlingController: requests pass one spacing apart, queueing up to max-wait,
// with no credit built up while idle. Unless a test says otherwise: rate 10/s on Sentinel's
// millisecond clock (1000 % 10 == 0), so the spacing is 100ms, and max-wait 500ms.
#include "sluice/core/uniform_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/limiter.hpp"

namespace sluice::core {
namespace {

using namespace test::units;
using Queue = test::TestLimiter<UniformQueue>;

UniformQueue::Params ten_per_second_queue() { return UniformQueue::make(per_second(10), ms(500)); }

// Delays of `n` requests at one instant; -1 for a rejected one.
std::vector<Nanos> delays_at(Queue& q, Nanos now, int n, std::int64_t cost = 1) {
  std::vector<Nanos> out;
  for (int i = 0; i < n; ++i) {
    const Decision d = q.at(now, cost);
    out.push_back(d.allowed ? d.delay : -1);
  }
  return out;
}

TEST(UniformQueue, ChoosesSentinelsClockAndSpacing) {
  const UniformQueue::Params ten = ten_per_second_queue();
  EXPECT_FALSE(ten.use_nanos);
  EXPECT_EQ(UniformQueue::cost_time(ten, 1), 100);  // ms
  const UniformQueue::Params three = UniformQueue::make(per_second(3), ms(500));
  EXPECT_TRUE(three.use_nanos);                                          // 1000 % 3 != 0
  EXPECT_EQ(UniformQueue::cost_time(three, 1), 333'333'333);             // ns, rounded
  EXPECT_TRUE(UniformQueue::make(per_second(2000), ms(500)).use_nanos);  // above 1000/s
  EXPECT_TRUE(UniformQueue::make(Rate{1, sec(4)}, ms(500)).use_nanos);   // round(0.25) == 0
  const UniformQueue::Params uneven = UniformQueue::make(Rate{22, sec(5)}, ms(500));  // 4.4/s
  EXPECT_FALSE(uneven.use_nanos);                      // round(4.4) = 4 divides 1000
  EXPECT_EQ(UniformQueue::cost_time(uneven, 1), 227);  // round(1000 / 4.4) = round(227.27)
}

TEST(UniformQueue, QueuesABurstOneSpacingApartUpToMaxWait) {
  Queue q(ten_per_second_queue());
  EXPECT_EQ(delays_at(q, sec(1), 8),
            (std::vector<Nanos>{0, ms(100), ms(200), ms(300), ms(400), ms(500), -1, -1}));
  const Decision d = q.at(sec(1));  // its slot would be 600ms away, 100ms beyond max-wait
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, ms(100));
  EXPECT_EQ(delays_at(q, ms(1100), 2), (std::vector<Nanos>{ms(500), -1}));
}

// Sentinel's -1 start lies on an epoch clock, so its users never see a first request wait;
// at virtual time 0 a literal -1 would have queued it 99ms.
TEST(UniformQueue, AKeysFirstRequestPassesAtOnceEvenAtVirtualTimeZero) {
  Queue q(ten_per_second_queue());
  const Decision first = q.at(0);
  EXPECT_TRUE(first.allowed);
  EXPECT_EQ(first.delay, 0);
  EXPECT_EQ(delays_at(q, 0, 2), (std::vector<Nanos>{ms(100), ms(200)}));
}

TEST(UniformQueue, AKeysFirstRequestPassesAtOnceOnEitherClockWhateverItsCost) {
  Queue millis(ten_per_second_queue());
  const Decision big = millis.at(ms(7), 50);  // 5s of spacing, far beyond max-wait
  EXPECT_TRUE(big.allowed);
  EXPECT_EQ(big.delay, 0);
  EXPECT_EQ(millis.at(ms(7)).delay, ms(100));  // spaced from that pass, by its own cost
  Queue nanos(UniformQueue::make(per_second(3), ms(500)));
  EXPECT_EQ(nanos.at(1).delay, 0);
  EXPECT_EQ(nanos.at(1).delay, 333'333'333);
}

TEST(UniformQueue, BuildsNoCreditWhileIdle) {
  Queue q(ten_per_second_queue());
  ASSERT_TRUE(q.at(sec(1)).allowed);
  EXPECT_EQ(delays_at(q, sec(11), 3), (std::vector<Nanos>{0, ms(100), ms(200)}));
}

TEST(UniformQueue, CostMultipliesTheSpacing) {
  Queue q(ten_per_second_queue());
  EXPECT_EQ(q.at(sec(1)).delay, 0);
  EXPECT_EQ(q.at(sec(1), 3).delay, ms(300));
  EXPECT_EQ(q.at(sec(1), 2).delay, ms(500));
}

TEST(UniformQueue, ACostWhoseSpacingExceedsMaxWaitPassesOnlyWhenTheLastPassIsThatFarBack) {
  // 6 permits = 600ms of spacing: never queueable within 500ms, but Sentinel lets it through
  // at once when the last pass is 600ms ago. So there is no kNever here.
  Queue q(ten_per_second_queue());
  EXPECT_EQ(q.at(sec(1), 6).delay, 0);
  const Decision soon = q.at(ms(1050), 6);  // slot at 1.6s: 550ms away
  EXPECT_FALSE(soon.allowed);
  EXPECT_EQ(soon.retry_after, ms(50));
  EXPECT_EQ(q.at(ms(1100), 6).delay, ms(500));
}

TEST(UniformQueue, AClockThatDoesNotMoveFillsTheQueueOnce) {
  Queue q(ten_per_second_queue());
  EXPECT_EQ(q.allowed_of(1000, sec(3)), 6);
}

TEST(UniformQueue, AJumpOfHoursPassesOneAtOnceAndQueuesTheRest) {
  Queue q(ten_per_second_queue());
  EXPECT_EQ(q.allowed_of(6, sec(1)), 6);
  EXPECT_EQ(delays_at(q, hours(5), 2), (std::vector<Nanos>{0, ms(100)}));
}

TEST(UniformQueue, HugeCostsAndTheLastInstantOfATraceNeitherCrashNorWrap) {
  Queue q(ten_per_second_queue());
  EXPECT_TRUE(q.at(sec(1), kHugeCost).allowed);    // its spacing saturates; a first pass is free
  const Decision known = q.at(sec(1), kHugeCost);  // last pass + spacing leaves int64
  EXPECT_FALSE(known.allowed);
  EXPECT_TRUE(known.overflow);
  EXPECT_EQ(delays_at(q, kEndOfTime, 2), (std::vector<Nanos>{0, ms(100)}));

  Queue nanos(UniformQueue::make(per_second(3), ms(500)));
  EXPECT_EQ(nanos.at(kEndOfTime).delay, 0);
  EXPECT_TRUE(nanos.at(kEndOfTime).overflow);  // next slot is past the end of int64 ns
}

TEST(UniformQueue, RetuneCarriesTheLastPassIntoTheNewClockUnit) {
  Queue q(ten_per_second_queue());
  ASSERT_TRUE(q.at(sec(1)).allowed);                             // last pass 1000 (ms)
  q.retune(UniformQueue::make(per_second(3), ms(500)), sec(1));  // ns clock: 1e9
  EXPECT_EQ(q.at(sec(1)).delay, 333'333'333);
}

TEST(UniformQueue, IsIdleOnce1024SpacingsHavePassed) {
  Queue q(ten_per_second_queue());
  EXPECT_TRUE(q.idle(0));
  ASSERT_TRUE(q.at(sec(1)).allowed);
  EXPECT_FALSE(q.idle(sec(1) + ms(102'400)));
  EXPECT_TRUE(q.idle(sec(1) + ms(102'401)));
}

}  // namespace
}  // namespace sluice::core
