// The Redis script's settlement (request kind s, and a rule's reserve: flag c) against the
// core's (core/settle.hpp): the same decisions and settlements at the same virtual instants,
// through core::Settle here and through the script in a real redis-server, give the same
// answers at every step, for each algorithm that settles.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "redis/redis_process.hpp"
#include "sluice/backend/redis/script.hpp"
#include "sluice/backend/redis/script_codec.hpp"
#include "sluice/core/peek.hpp"
#include "sluice/core/settle.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis::testing {
namespace {

std::string describe(const core::Decision& d) {
  return "allowed " + std::to_string(d.allowed) + " delay " + std::to_string(d.delay) +
         " remaining " + std::to_string(d.remaining) + " retry " + std::to_string(d.retry_after) +
         " reset " + std::to_string(d.reset_after) + " limit " + std::to_string(d.limit) +
         " overflow " + std::to_string(d.overflow);
}

// One step of a sequence: a decision of `cost`, or (settle) `cost` settled, at `now`.
struct Step {
  core::Nanos now = 0;
  bool settle = false;
  std::int64_t cost = 0;
};

// Steps `span` apart at most, decisions of cost 1 to 3 and settlements of -5 to +6 (0 too),
// from a fixed seed: the same sequence on every run.
std::vector<Step> sequence(core::Nanos span, std::uint64_t seed, int n) {
  std::uint64_t x = seed;
  const auto next = [&x](std::uint64_t m) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 11) % m;
  };
  std::vector<Step> out;
  core::Nanos now = 1'700'000'000 * core::kNanosPerSecond + 123'456'789;
  for (int i = 0; i < n; ++i) {
    now += static_cast<core::Nanos>(next(static_cast<std::uint64_t>(span)));
    const bool settle = next(10) < 6;
    const auto cost =
        settle ? static_cast<std::int64_t>(next(12)) - 5 : static_cast<std::int64_t>(next(3)) + 1;
    out.push_back({now, settle, cost});
  }
  return out;
}

class ScriptSettle : public ::testing::Test {
 protected:
  void SetUp() override {
    const Reply loaded = server_.call({"SCRIPT", "LOAD", std::string(script_text())});
    ASSERT_EQ(loaded.type, Reply::Type::kString) << loaded.str;
    sha_ = loaded.str;
  }

  // One request through the script at `now`: its answer.
  core::Decision ask(const ScriptLimit& limit, const std::string& key, const Step& step) {
    ScriptBatch batch(ScriptTime{false, step.now});
    const int l = batch.add_limit(limit);
    const int k = batch.add_key(key);
    batch.add_request(step.settle ? RequestKind::kSettle : RequestKind::kDecide, step.cost, 0,
                      {{l, k}});
    std::vector<std::string> args = {"EVALSHA", sha_, "1", key};
    for (auto& a : batch.args()) args.push_back(std::move(a));
    const Reply r = server_.call(args);
    EXPECT_EQ(r.type, Reply::Type::kArray) << r.str;
    std::vector<long long> flat;
    for (const Reply& e : r.elements) flat.push_back(e.integer);
    auto answers = decode_reply_integers(flat, batch.limits_per_request());
    EXPECT_TRUE(answers.ok()) << (answers.ok() ? "" : answers.error());
    return answers.ok() ? (*answers)[0].combined : core::overflowed();
  }

  // The steps through core and through the script; `reserve` > 0: a decision charges that
  // whatever its cost (a rule's reserve, flag c). The count of steps whose answers differ.
  template <class A>
  int run(const char* text, core::Nanos span, std::uint64_t seed, std::int64_t reserve = 0) {
    const auto spec = spec::parse_limit_spec(text);
    EXPECT_TRUE(spec.ok()) << text;
    const auto& p = std::get<typename A::Params>(spec->params);
    ScriptLimit limit = script_limit(*spec);
    limit.cost = reserve;
    const std::string key = "settle:" + std::string(text) + ":" + std::to_string(seed);
    std::optional<typename A::State> state;
    int differ = 0;
    int settled = 0, admitted = 0, refused = 0;
    for (const Step& step : sequence(span, seed, 300)) {
      if (!state) state = A::start(p, step.now);
      core::Decision local;
      if (step.settle) {
        if (step.cost != 0) *state = core::Settle<A>::apply(p, *state, step.now, step.cost);
        local = core::peek<A>(p, *state, step.now);
        ++settled;
      } else {
        const auto s = A::decide(p, *state, step.now, reserve > 0 ? reserve : step.cost, 0);
        local = s.decision;
        if (local.allowed) *state = s.next;
        ++(local.allowed ? admitted : refused);
      }
      const core::Decision remote = ask(limit, key, step);
      const bool same = local.allowed == remote.allowed && local.delay == remote.delay &&
                        local.remaining == remote.remaining &&
                        local.retry_after == remote.retry_after &&
                        local.reset_after == remote.reset_after && local.limit == remote.limit &&
                        local.overflow == remote.overflow;
      if (!same) {
        ADD_FAILURE() << text << " at " << step.now << (step.settle ? " settle " : " decide ")
                      << step.cost << "\n  core:  " << describe(local)
                      << "\n  redis: " << describe(remote);
        if (++differ > 3) break;
      }
    }
    // The sequence reaches each case: refunds, debts, admissions and refusals.
    EXPECT_GT(settled, 100) << text;
    EXPECT_GT(admitted, 10) << text;
    EXPECT_GT(refused, 10) << text;
    return differ;
  }

  RedisServer server_;
  std::string sha_;
};

TEST_F(ScriptSettle, GcraAgreesWithTheCore) {
  EXPECT_EQ(run<core::Gcra>("gcra:rate=6/m,burst=4", 4 * core::kNanosPerSecond, 1), 0);
  EXPECT_EQ(run<core::Gcra>("gcra:rate=7/3s,burst=9", 700 * core::kNanosPerMilli, 2), 0);
}

TEST_F(ScriptSettle, TokenBucketAgreesWithTheCore) {
  // 0.7 tokens a second: the refill is a double that neither side may round differently.
  EXPECT_EQ(run<core::TokenBucket>("token-bucket:rate=7/10s,burst=5", 3 * core::kNanosPerSecond, 3),
            0);
  EXPECT_EQ(run<core::TokenBucket>("token-bucket:rate=100/s,burst=8", 40 * core::kNanosPerMilli, 4),
            0);
}

TEST_F(ScriptSettle, FixedWindowAgreesWithTheCore) {
  EXPECT_EQ(run<core::FixedWindow>("fixed-window:limit=6,window=10s", 2 * core::kNanosPerSecond, 5),
            0);
}

TEST_F(ScriptSettle, SlidingWindowAgreesWithTheCore) {
  EXPECT_EQ(
      run<core::SlidingWindow>("sliding-window:limit=6,window=10s", 2 * core::kNanosPerSecond, 6),
      0);
}

TEST_F(ScriptSettle, AReserveIsWhatADecisionChargesWhateverItsCost) {
  EXPECT_EQ(run<core::Gcra>("gcra:rate=6/m,burst=9", 3 * core::kNanosPerSecond, 7, 3), 0);
  EXPECT_EQ(
      run<core::TokenBucket>("token-bucket:rate=1/s,burst=10", 1500 * core::kNanosPerMilli, 8, 4),
      0);
  EXPECT_EQ(
      run<core::FixedWindow>("fixed-window:limit=10,window=10s", 2 * core::kNanosPerSecond, 9, 3),
      0);
  EXPECT_EQ(run<core::SlidingWindow>("sliding-window:limit=10,window=10s",
                                     2 * core::kNanosPerSecond, 10, 3),
            0);
}

}  // namespace
}  // namespace sluice::backend::redis::testing
