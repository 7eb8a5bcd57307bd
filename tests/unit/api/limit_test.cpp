// sluice::Limit: a spec string and the typed factories are one language, with the same
// canonical text and the same errors.
#include "sluice/limit.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(Limit, ParsesASpecIntoItsCanonicalTextWithDefaultsFilledIn) {
  EXPECT_EQ(Limit("token-bucket:burst=20,rate=10/s").spec(), "token-bucket:rate=10/s,burst=20");
  EXPECT_EQ(Limit("smooth-bursty:rate=5/s").spec(), "smooth-bursty:rate=5/s,max-burst=1s");
  EXPECT_EQ(Limit("queue:rate=100/s").algorithm(), "queue");
}

TEST(Limit, TypedFactoriesWriteTheSameSpecs) {
  EXPECT_EQ(Limit::token_bucket(Rate::per_second(10), 20).spec(),
            "token-bucket:rate=10/s,burst=20");
  EXPECT_EQ(Limit::gcra(Rate{30, 60s}, 15).spec(), "gcra:rate=30/m,burst=15");
  EXPECT_EQ(Limit::gcra(Rate{100, 10s}, 5).spec(), "gcra:rate=100/10s,burst=5");
  EXPECT_EQ(Limit::leaky_bucket(Rate::per_minute(100), 10, 3).spec(),
            "leaky-bucket:rate=100/m,burst=10,delay=3");
  EXPECT_EQ(Limit::leaky_bucket_nodelay(Rate::per_second(10), 5).spec(),
            "leaky-bucket:rate=10/s,burst=5,nodelay=1");
  EXPECT_EQ(Limit::fixed_window(100, 1min).spec(), "fixed-window:limit=100,window=1m");
  EXPECT_EQ(Limit::sliding_window(600, 1h).spec(), "sliding-window:limit=600,window=1h");
  EXPECT_EQ(Limit::sliding_log(5, 250ms).spec(), "sliding-log:limit=5,window=250ms");
  EXPECT_EQ(Limit::smooth_bursty(Rate::per_second(2)).spec(),
            "smooth-bursty:rate=2/s,max-burst=1s");
  EXPECT_EQ(Limit::smooth_warmup(Rate::per_second(4), 1500us, 2.5).spec(),
            "smooth-warmup:rate=4/s,warmup=1500us,cold-factor=2.5");
  EXPECT_EQ(Limit::queue(Rate::per_hour(7)).spec(), "queue:rate=7/h,max-wait=500ms");
}

TEST(Limit, ABadSpecThrowsLimitErrorNamingTheProblem) {
  try {
    Limit("token-bucket:rate=10/s");
    FAIL() << "no error";
  } catch (const LimitError& e) {
    EXPECT_EQ(std::string(e.what()),
              "token-bucket: missing parameter 'burst' (required: rate, burst)");
  }
  EXPECT_THROW(Limit("nope:x=1"), LimitError);
  EXPECT_THROW(Limit::token_bucket(Rate{0, 1s}, 5), std::invalid_argument);
}

TEST(Limit, ParseReturnsTheErrorAsAValue) {
  std::string error;
  EXPECT_FALSE(Limit::parse("gcra:rate=10/s,burst=x", &error));
  EXPECT_NE(error.find("burst 'x' is not a plain non-negative integer"), std::string::npos)
      << error;
  const auto ok = Limit::parse("gcra:rate=10/s,burst=2");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->spec(), "gcra:rate=10/s,burst=2");
}

TEST(Limit, TypedValuesOutsideTheLanguageAreRefusedAsItsTextWouldBe) {
  // Durations are whole microseconds and up; nginx's rate has a floor of 1/1000 per second.
  EXPECT_THROW(Limit::fixed_window(5, 1500ns), LimitError);
  EXPECT_THROW(Limit::token_bucket(Rate::per_second(10), -1), LimitError);
  EXPECT_THROW(Limit::leaky_bucket(Rate::per_hour(1)), LimitError);
  EXPECT_THROW(Limit::smooth_warmup(Rate::per_second(4), 1s, 0.5), LimitError);
  EXPECT_THROW(Limit::queue(Rate::per_second(4), 1500us), LimitError);
}

}  // namespace
}  // namespace sluice
