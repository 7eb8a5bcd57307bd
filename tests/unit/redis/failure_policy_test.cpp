// What a rule kept in Redis answers when Redis cannot: each failure policy, decided without
// any Redis at all (the path of a loop that has no store, and of every failed call).
#include <gtest/gtest.h>

#include "sluice/backend/redis/store.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis {
namespace {

std::shared_ptr<const RemoteLimit> limit(const char* spec, FailurePolicy policy,
                                         double share = 1.0) {
  RemoteLimitOptions o;
  o.on_failure = policy;
  o.local_share = share;
  auto made = RemoteLimit::make("r", *spec::parse_limit_spec(spec), o);
  EXPECT_TRUE(made.ok()) << made.error();
  return *made;
}

Query one(std::shared_ptr<const RemoteLimit> l, const char* key) {
  Query q;
  q.items.push_back({std::move(l), key, 0});
  return q;
}

TEST(FailurePolicy, FailOpenAllowsWithRemainingUnknown) {
  const Answer a =
      answer_without_store(one(limit("gcra:rate=1/s,burst=0", FailurePolicy::kOpen), "k"), 0);
  EXPECT_TRUE(a.combined.allowed);
  EXPECT_EQ(a.combined.remaining, -1);
  EXPECT_EQ(a.source, Source::kFailOpen);
}

TEST(FailurePolicy, FailClosedDeniesWithARetryHint) {
  const Answer a =
      answer_without_store(one(limit("gcra:rate=1/s,burst=0", FailurePolicy::kClosed), "k"), 0);
  EXPECT_FALSE(a.combined.allowed);
  EXPECT_GT(a.combined.retry_after, 0);
  EXPECT_EQ(a.source, Source::kFailClosed);
}

TEST(FailurePolicy, LocalDecidesAtItsShareAndKeepsStateAcrossCalls) {
  // fixed-window limit 10 at share 0.4: 4 per window while Redis is away.
  auto l = limit("fixed-window:limit=10,window=1s", FailurePolicy::kLocal, 0.4);
  int allowed = 0;
  for (int i = 0; i < 10; ++i) {
    const Answer a = answer_without_store(one(l, "k"), 0);
    EXPECT_EQ(a.source, Source::kLocal);
    allowed += a.combined.allowed ? 1 : 0;
  }
  EXPECT_EQ(allowed, 4);
  // Another key has its own window.
  EXPECT_TRUE(answer_without_store(one(l, "other"), 0).combined.allowed);
}

TEST(FailurePolicy, LocalFallbackOfACalendarWindowCountsOnTheAsksUnixTime) {
  // The loop's steady clock says 5 s; the ask was made at Jan 31, 23:59:59 in Berlin: the
  // fallback's day ends in a second, at Berlin's midnight.
  auto l = limit("fixed-window:limit=2,window=1d,align=calendar,timezone=Europe/Berlin",
                 FailurePolicy::kLocal, 0.5);
  Query q = one(l, "k");
  q.items[0].unix_now = (1769900400 - 1) * core::kNanosPerSecond;
  const Answer first = answer_without_store(q, 5 * core::kNanosPerSecond);
  EXPECT_TRUE(first.combined.allowed);
  EXPECT_EQ(first.combined.reset_after, core::kNanosPerSecond);
  const Answer second = answer_without_store(q, 5 * core::kNanosPerSecond);
  EXPECT_FALSE(second.combined.allowed) << "limit 2 at share 0.5: 1 a day";
  EXPECT_EQ(second.combined.retry_after, core::kNanosPerSecond);
}

TEST(FailurePolicy, SeveralRulesFoldAllMustPassAndNameTheFirstFallback) {
  Query q;
  q.items.push_back({limit("gcra:rate=1/s,burst=0", FailurePolicy::kOpen), "k", 0});
  q.items.push_back({limit("gcra:rate=1/s,burst=0", FailurePolicy::kClosed), "k", 0});
  const Answer a = answer_without_store(q, 0);
  ASSERT_EQ(a.each.size(), 2u);
  EXPECT_TRUE(a.each[0].allowed);
  EXPECT_FALSE(a.each[1].allowed);
  EXPECT_FALSE(a.combined.allowed);
  EXPECT_EQ(a.source, Source::kFailOpen);
}

}  // namespace
}  // namespace sluice::backend::redis
