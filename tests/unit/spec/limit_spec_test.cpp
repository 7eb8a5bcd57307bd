// The limit spec language, `ALGORITHM:param=value,...`: what it accepts, the canonical text
// with defaults filled in, and an error for every way to get it wrong that names the problem.
#include "sluice/spec/limit_spec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace sluice::spec {
namespace {

using core::kNanosPerMilli;
using core::kNanosPerSecond;

// The error of a spec that must fail (the test fails if it parses).
std::string error_of(std::string_view text) {
  auto spec = parse_limit_spec(text);
  EXPECT_FALSE(spec) << text << " parsed as " << (spec ? spec->canonical : "");
  return spec ? std::string() : spec.error();
}

std::string canonical_of(std::string_view text) {
  auto spec = parse_limit_spec(text);
  EXPECT_TRUE(spec) << text << ": " << (spec ? "" : spec.error());
  return spec ? spec->canonical : std::string();
}

TEST(LimitSpec, NamesEveryAlgorithmInDocumentationOrder) {
  EXPECT_EQ(algorithm_names(),
            (std::vector<std::string>{"token-bucket", "gcra", "leaky-bucket", "fixed-window",
                                      "sliding-log", "sliding-window", "smooth-bursty",
                                      "smooth-warmup", "queue", "concurrency"}));
}

TEST(LimitSpec, ParsesATokenBucket) {
  auto spec = parse_limit_spec("token-bucket:rate=10/s,burst=20");
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(spec->algorithm, "token-bucket");
  EXPECT_EQ(spec->wait, WaitSupport::kCallerMaxWait);
  const auto& p = std::get<core::TokenBucket::Params>(spec->params);
  EXPECT_EQ(p.rate, (core::Rate{10, kNanosPerSecond}));
  EXPECT_EQ(p.burst, 20);
  EXPECT_DOUBLE_EQ(p.per_second, 10.0);
}

TEST(LimitSpec, CanonicalTextPutsParametersInTableOrderAndFillsDefaults) {
  EXPECT_EQ(canonical_of("token-bucket:burst=20,rate=10/s"), "token-bucket:rate=10/s,burst=20");
  EXPECT_EQ(canonical_of("gcra:rate=30/60s,burst=15"), "gcra:rate=30/60s,burst=15");
  EXPECT_EQ(canonical_of("leaky-bucket:rate=100/m"), "leaky-bucket:rate=100/m,burst=0,delay=0");
  EXPECT_EQ(canonical_of("fixed-window:window=1m,limit=100"), "fixed-window:limit=100,window=1m");
  EXPECT_EQ(canonical_of("smooth-bursty:rate=5/s"), "smooth-bursty:rate=5/s,max-burst=1s");
  EXPECT_EQ(canonical_of("smooth-warmup:rate=5/s,warmup=3s"),
            "smooth-warmup:rate=5/s,warmup=3s,cold-factor=3");
  EXPECT_EQ(canonical_of("queue:rate=10/s"), "queue:rate=10/s,max-wait=500ms");
  EXPECT_EQ(canonical_of("concurrency:limit=8"), "concurrency:limit=8");
}

// Found by tests/fuzz/spec_fuzz.cpp: "delay=1,nodelay=0" did not parse again.
TEST(LimitSpec, ALeakyBucketsCanonicalTextNamesDelayOrNodelayAndParsesAgain) {
  EXPECT_EQ(canonical_of("leaky-bucket:rate=200/m,burst=3,delay=1"),
            "leaky-bucket:rate=200/m,burst=3,delay=1");
  EXPECT_EQ(canonical_of("leaky-bucket:nodelay=1,rate=7/s,burst=20"),
            "leaky-bucket:rate=7/s,burst=20,nodelay=1");
  EXPECT_EQ(canonical_of("leaky-bucket:rate=7/s,nodelay=0"),
            "leaky-bucket:rate=7/s,burst=0,delay=0");
  for (const char* text : {"leaky-bucket:rate=200/m,burst=3,delay=1",
                           "leaky-bucket:rate=7/s,burst=20,nodelay=1", "leaky-bucket:rate=1/s"}) {
    const std::string canonical = canonical_of(text);
    EXPECT_EQ(canonical_of(canonical), canonical) << text;
  }
}

TEST(LimitSpec, DefaultsReachTheTypedParameters) {
  const auto leaky =
      std::get<core::LeakyBucket::Params>(parse_limit_spec("leaky-bucket:rate=100/m")->params);
  EXPECT_EQ(leaky.burst, 0);
  EXPECT_EQ(leaky.delay, 0);
  EXPECT_EQ(leaky.rate_milli, 1666);
  const auto bursty =
      std::get<core::SmoothBursty::Params>(parse_limit_spec("smooth-bursty:rate=5/s")->params);
  EXPECT_EQ(bursty.max_burst, kNanosPerSecond);
  EXPECT_DOUBLE_EQ(bursty.max_permits, 5.0);
  const auto warm = std::get<core::SmoothWarmup::Params>(
      parse_limit_spec("smooth-warmup:rate=5/s,warmup=3s")->params);
  EXPECT_DOUBLE_EQ(warm.cold_factor, 3.0);
  const auto queue =
      std::get<core::UniformQueue::Params>(parse_limit_spec("queue:rate=10/s")->params);
  EXPECT_EQ(queue.max_wait, 500 * kNanosPerMilli);
  EXPECT_EQ(queue.max_queueing_ms, 500);
}

TEST(LimitSpec, LeakyBucketTakesDelayOrNodelay) {
  const auto delayed = std::get<core::LeakyBucket::Params>(
      parse_limit_spec("leaky-bucket:rate=10/s,burst=5,delay=2")->params);
  EXPECT_EQ(delayed.delay, 2);
  const auto nodelay = std::get<core::LeakyBucket::Params>(
      parse_limit_spec("leaky-bucket:rate=10/s,burst=5,nodelay=1")->params);
  EXPECT_EQ(nodelay.delay, core::LeakyBucket::kNoDelay);
  EXPECT_NE(error_of("leaky-bucket:rate=10/s,nodelay=2").find("must be 1 (on) or 0"),
            std::string::npos);
}

TEST(LimitSpec, SaysHowEachAlgorithmTreatsWaiting) {
  EXPECT_EQ(parse_limit_spec("gcra:rate=1/s,burst=1")->wait, WaitSupport::kCallerMaxWait);
  EXPECT_EQ(parse_limit_spec("smooth-bursty:rate=1/s")->wait, WaitSupport::kCallerMaxWait);
  EXPECT_EQ(parse_limit_spec("leaky-bucket:rate=1/s")->wait, WaitSupport::kOwnRule);
  EXPECT_EQ(parse_limit_spec("queue:rate=1/s")->wait, WaitSupport::kOwnRule);
  EXPECT_EQ(parse_limit_spec("sliding-log:limit=1,window=1s")->wait, WaitSupport::kRejectOnly);
  EXPECT_EQ(parse_limit_spec("concurrency:limit=1")->wait, WaitSupport::kNotTimeBased);
}

TEST(LimitSpec, AnUnknownAlgorithmErrorListsTheAcceptedNames) {
  const std::string e = error_of("token_bucket:rate=10/s,burst=20");
  EXPECT_NE(e.find("unknown algorithm 'token_bucket'"), std::string::npos) << e;
  EXPECT_NE(e.find("token-bucket, gcra, leaky-bucket, fixed-window, sliding-log, "
                   "sliding-window, smooth-bursty, smooth-warmup, queue, concurrency"),
            std::string::npos)
      << e;
  EXPECT_NE(error_of("").find("unknown algorithm ''"), std::string::npos);
}

TEST(LimitSpec, AnUnknownParameterErrorListsTheAcceptedOnes) {
  const std::string e = error_of("gcra:rate=1/s,brust=3");
  EXPECT_NE(e.find("gcra: unknown parameter 'brust'"), std::string::npos) << e;
  EXPECT_NE(e.find("(accepted: rate, burst)"), std::string::npos) << e;
  const std::string leaky = error_of("leaky-bucket:rate=1/s,max-wait=1s");
  EXPECT_NE(leaky.find("(accepted: rate, burst, delay, nodelay)"), std::string::npos) << leaky;
}

TEST(LimitSpec, AMissingParameterErrorNamesItAndListsTheRequiredOnes) {
  const std::string e = error_of("gcra:rate=1/s");
  EXPECT_NE(e.find("gcra: missing parameter 'burst'"), std::string::npos) << e;
  EXPECT_NE(e.find("(required: rate, burst)"), std::string::npos) << e;
  EXPECT_NE(error_of("token-bucket").find("missing parameter 'rate'"), std::string::npos);
  const std::string warm = error_of("smooth-warmup:rate=1/s");
  EXPECT_NE(warm.find("missing parameter 'warmup' (required: rate, warmup)"), std::string::npos)
      << warm;
}

TEST(LimitSpec, ADuplicateParameterIsAnError) {
  const std::string e = error_of("gcra:rate=1/s,burst=1,rate=2/s");
  EXPECT_NE(e.find("parameter 'rate' given twice"), std::string::npos) << e;
  // Even when both say the same thing.
  EXPECT_FALSE(parse_limit_spec("gcra:rate=1/s,burst=1,burst=1"));
}

TEST(LimitSpec, ABadValueErrorNamesTheParameterAndTheValue) {
  const std::string rate = error_of("token-bucket:rate=fast,burst=1");
  EXPECT_NE(rate.find("bad value for 'rate'"), std::string::npos) << rate;
  EXPECT_NE(rate.find("'fast'"), std::string::npos) << rate;
  for (const char* burst : {"-1", "1.5", "1e3", "+2", "2 ", "0x10"}) {
    const std::string e = error_of(std::string("token-bucket:rate=1/s,burst=") + burst);
    EXPECT_NE(e.find("bad value for 'burst'"), std::string::npos) << burst << ": " << e;
  }
  const std::string big = error_of("token-bucket:rate=1/s,burst=99999999999999999");
  EXPECT_NE(big.find("too large"), std::string::npos) << big;
  const std::string window = error_of("fixed-window:limit=1,window=5d");
  EXPECT_NE(window.find("bad value for 'window'"), std::string::npos) << window;
  EXPECT_NE(error_of("gcra:rate=1/s,burst=").find("parameter 'burst' has no value"),
            std::string::npos);
}

TEST(LimitSpec, SomethingThatIsNotParamEqualsValueIsAnError) {
  for (const char* text :
       {"gcra:rate=1/s,,burst=1", "gcra:rate=1/s,burst=1,", "gcra:", "gcra:rate", "gcra:=1/s"}) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find("is not param=value (accepted parameters: rate, burst)"), std::string::npos)
        << text << ": " << e;
  }
}

TEST(LimitSpec, LeakyBucketRefusesDelayWithNodelay) {
  const std::string e = error_of("leaky-bucket:rate=10/s,burst=5,delay=2,nodelay=1");
  EXPECT_NE(e.find("'delay' and 'nodelay' are exclusive"), std::string::npos) << e;
}

TEST(LimitSpec, LeakyBucketRefusesARateNginxCannotHold) {
  // nginx keeps whole milli-requests per second: 1/h is 0.00027/s, which rounds to 0.
  const std::string e = error_of("leaky-bucket:rate=1/h");
  EXPECT_NE(e.find("outside nginx's range"), std::string::npos) << e;
  EXPECT_TRUE(parse_limit_spec("leaky-bucket:rate=1/1000s"));  // exactly 1 milli-request/s
}

TEST(LimitSpec, QueueMaxWaitMustBeWholeMillisecondsWithinSentinelsIntRange) {
  const std::string e = error_of("queue:rate=10/s,max-wait=1500us");
  EXPECT_NE(e.find("max-wait '1500us' must be whole milliseconds"), std::string::npos) << e;
  EXPECT_TRUE(parse_limit_spec("queue:rate=10/s,max-wait=2000us"));
  // 600h = 2,160,000,000 ms > 2^31 - 1.
  EXPECT_NE(error_of("queue:rate=10/s,max-wait=600h").find("int range"), std::string::npos);
}

TEST(LimitSpec, SmoothWarmupColdFactorMustBeAPlainDecimalOfAtLeastOne) {
  const std::string e = error_of("smooth-warmup:rate=5/s,warmup=3s,cold-factor=0.5");
  EXPECT_NE(e.find("cold-factor must be at least 1"), std::string::npos) << e;
  const auto ok = parse_limit_spec("smooth-warmup:rate=5/s,warmup=3s,cold-factor=2.5");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_DOUBLE_EQ(std::get<core::SmoothWarmup::Params>(ok->params).cold_factor, 2.5);
  EXPECT_TRUE(parse_limit_spec("smooth-warmup:rate=5/s,warmup=3s,cold-factor=1"));
  for (const char* bad : {"abc", "1e3", ".5", "3.", "1.2.3", "-2"}) {
    const std::string err =
        error_of(std::string("smooth-warmup:rate=5/s,warmup=3s,cold-factor=") + bad);
    EXPECT_NE(err.find("not a plain decimal number"), std::string::npos) << bad << ": " << err;
  }
  EXPECT_NE(error_of("smooth-warmup:rate=5/s,warmup=0s").find("at least 1us"), std::string::npos);
}

TEST(LimitSpec, GcraRefusesIntervalsBelowANanosecondAndToleranceOverflow) {
  const std::string fast = error_of("gcra:rate=2000000000/s,burst=1");
  EXPECT_NE(fast.find("below 1ns"), std::string::npos) << fast;
  // 1/h: T = 3.6e12 ns; times 4e15 + 1 is far beyond int64.
  const std::string wide = error_of("gcra:rate=1/h,burst=4000000000000000");
  EXPECT_NE(wide.find("overflows"), std::string::npos) << wide;
}

TEST(LimitSpec, WindowsMustBePositive) {
  for (const char* algo : {"fixed-window", "sliding-log", "sliding-window"}) {
    const std::string e = error_of(std::string(algo) + ":limit=3,window=0s");
    EXPECT_NE(e.find("window must be positive"), std::string::npos) << algo << ": " << e;
  }
}

}  // namespace
}  // namespace sluice::spec
