// A limit kept in Redis: how its keys are named, and the local fallback's share of the rate.
#include "sluice/backend/redis/remote_limit.hpp"

#include <gtest/gtest.h>

#include "sluice/backend/redis/key_slot.hpp"

namespace sluice::backend::redis {
namespace {

spec::LimitSpec parse(const char* text) { return *spec::parse_limit_spec(text); }

TEST(RemoteLimit, KeysCarryRuleAndKeyInTheHashTagAndTheAlgorithmAfter) {
  auto l = RemoteLimit::make("per-user", parse("gcra:rate=10/s,burst=5"), {});
  ASSERT_TRUE(l.ok()) << l.error();
  EXPECT_EQ((*l)->state_key("alice"), "sluice:{per-user:alice}:gcra");
  // The slot is that of the tag: one rule's keys spread over the cluster.
  EXPECT_EQ(key_slot((*l)->state_key("alice")), key_slot("per-user:alice"));
}

TEST(RemoteLimit, LeasingIsRefusedWhereThereAreNoPermitsToTake) {
  RemoteLimitOptions o;
  o.lease = 10;
  auto l = RemoteLimit::make("q", parse("queue:rate=10/s"), o);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().find("queue cannot lease"), std::string::npos) << l.error();
}

TEST(RemoteLimit, LocalFallbackDecidesAtItsShare) {
  RemoteLimitOptions o;
  o.on_failure = FailurePolicy::kLocal;
  o.local_share = 0.5;
  auto l = RemoteLimit::make("g", parse("fixed-window:limit=10,window=1s"), o);
  ASSERT_TRUE(l.ok()) << l.error();
  ASSERT_NE((*l)->fallback(), nullptr);
  const std::string_view key = "k";
  int allowed = 0;
  for (int i = 0; i < 10; ++i) {
    auto d = (*l)->fallback()->decide(std::span<const std::string_view>(&key, 1), 0, 1, 0);
    allowed += d.decision.allowed ? 1 : 0;
  }
  EXPECT_EQ(allowed, 5);  // half of 10 in the window
}

TEST(ScaledSpec, ScalesRateBurstAndLimitKeepingTheRest) {
  auto s = scaled_spec(parse("token-bucket:rate=100/s,burst=20"), 0.25);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->canonical, "token-bucket:rate=25000/1000s,burst=5");
  auto w = scaled_spec(parse("leaky-bucket:rate=10/s,burst=0,nodelay=1"), 0.5);
  ASSERT_TRUE(w.ok()) << w.error();
  EXPECT_NE(w->canonical.find("burst=0"), std::string::npos);  // zero stays zero
}

TEST(ScaledSpec, NeverScalesBelowOne) {
  auto s = scaled_spec(parse("gcra:rate=1/s,burst=1"), 0.1);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_NE(s->canonical.find("burst=1"), std::string::npos) << s->canonical;
}

TEST(ScaledSpec, AShareOutsideZeroToOneIsAnError) {
  EXPECT_FALSE(scaled_spec(parse("gcra:rate=1/s,burst=1"), 0).ok());
  EXPECT_FALSE(scaled_spec(parse("gcra:rate=1/s,burst=1"), 1.5).ok());
}

TEST(FailurePolicy, NamesParseBackAndUnknownOnesListTheAccepted) {
  for (auto p : {FailurePolicy::kOpen, FailurePolicy::kClosed, FailurePolicy::kLocal}) {
    auto back = parse_failure_policy(failure_policy_name(p));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
  }
  auto bad = parse_failure_policy("maybe");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("fail-open, fail-closed, local"), std::string::npos);
}

}  // namespace
}  // namespace sluice::backend::redis
