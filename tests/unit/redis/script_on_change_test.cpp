// on_change in the Redis script: with proportional, a state written under other numbers is
// carried over as the local table carries it (A::retune, then core/rescale.hpp) the first time
// the new limit meets it, decision for decision the same as a local table retuned at that
// instant, for every algorithm that rescales; a state from before (written under keep) is
// rescaled from the limit it replaced when that is known. With reset, a limit's keys are
// named by it.
#include <gtest/gtest.h>

#include <variant>

#include "redis/script_runner.hpp"
#include "redis/spec_parse.hpp"
#include "sluice/backend/redis/key_slot.hpp"
#include "sluice/backend/redis/remote_limit.hpp"
#include "sluice/local/policy.hpp"
#include "sluice/local/table_limit.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis::testing {
namespace {

constexpr core::Nanos kMs = core::kNanosPerMilli;
constexpr core::Nanos kT0 = 1769900000 * core::kNanosPerSecond;  // Unix time: calendars too

using test::parse;

ScriptLimit proportional(const spec::LimitSpec& spec, const spec::LimitSpec* replaced = nullptr) {
  RemoteLimitOptions o;
  o.on_change = OnChange::kProportional;
  auto l = RemoteLimit::make("r", spec, o, replaced);
  EXPECT_TRUE(l.ok()) << l.error();
  return (*l)->script();
}

// A calendar window's limit as sent at `at` (its bounds); any other as it is.
ScriptLimit at_instant(ScriptLimit l, const spec::LimitSpec& spec, core::Nanos at) {
  const auto* p = std::get_if<core::FixedWindow::Params>(&spec.params);
  if (p == nullptr || p->calendar == nullptr) return l;
  return with_calendar_bounds(std::move(l), calendar_bounds(*p->calendar, at));
}

// The local backend: one key in a table of the spec, retuned as a reload retunes it.
class LocalKey {
 public:
  explicit LocalKey(const spec::LimitSpec& spec)
      : limit_(*local::make_table_limit(spec, 1 << 16)) {}
  core::Decision decide(core::Nanos at, std::int64_t cost = 1) {
    local::LimitAsk ask{&limit_.table, table::hash_key("k"), 0};
    local::EachDecision each;
    local::Leases leases;
    return local::decide_all(std::span(&ask, 1), at, cost, std::span(&each, 1), leases);
  }
  void retune(const spec::LimitSpec& to, core::Nanos at, bool proportional) {
    std::visit(
        [&](auto& table) {
          using Params = typename std::decay_t<decltype(*table)>::Params;
          table->retune(std::get<Params>(to.params), at, proportional);
        },
        limit_.table);
  }

 private:
  local::TableLimit limit_;
};

void expect_same(const core::Decision& local, const core::Decision& redis,
                 const std::string& what) {
  EXPECT_EQ(local.allowed, redis.allowed) << what;
  EXPECT_EQ(local.delay, redis.delay) << what;
  EXPECT_EQ(local.remaining, redis.remaining) << what;
  EXPECT_EQ(local.retry_after, redis.retry_after) << what;
  EXPECT_EQ(local.reset_after, redis.reset_after) << what;
  EXPECT_EQ(local.limit, redis.limit) << what;
}

struct Change {
  const char* from;
  const char* to;
};

// 8 requests under `from`, then the limit becomes `to`, then 40 more requests, 37 ms apart,
// each decided locally and by the script; the script carries the state at its first request.
void same_as_local(const Change& c, const ScriptLimit& first, const ScriptLimit& then) {
  const spec::LimitSpec from = parse(c.from), to = parse(c.to);
  ScriptRunner redis;
  LocalKey local(from);
  const std::string key = std::string("sluice:{r:k}:") + from.algorithm;
  for (int i = 0; i < 8; ++i) {
    const core::Nanos at = kT0 + i * kMs;
    expect_same(local.decide(at), redis.decide(at_instant(first, from, at), key, at),
                std::string(c.from) + " request " + std::to_string(i));
  }
  const core::Nanos change = kT0 + 300 * kMs;
  local.retune(to, change, true);
  for (int i = 0; i < 40; ++i) {
    const core::Nanos at = change + i * 37 * kMs;
    expect_same(local.decide(at), redis.decide(at_instant(then, to, at), key, at),
                std::string(c.from) + " -> " + c.to + " request " + std::to_string(i));
  }
}

constexpr Change kChanges[] = {
    {"gcra:rate=10/s,burst=10", "gcra:rate=10/s,burst=20"},
    {"gcra:rate=10/s,burst=10", "gcra:rate=25/s,burst=4"},
    {"token-bucket:rate=10/s,burst=10", "token-bucket:rate=10/s,burst=20"},
    {"token-bucket:rate=10/s,burst=10", "token-bucket:rate=3/s,burst=4"},
    {"leaky-bucket:rate=10/s,burst=10,nodelay=1", "leaky-bucket:rate=10/s,burst=20,nodelay=1"},
    {"leaky-bucket:rate=10/s,burst=10,delay=4", "leaky-bucket:rate=20/s,burst=5,delay=2"},
    {"fixed-window:limit=10,window=10s", "fixed-window:limit=20,window=10s"},
    {"fixed-window:limit=10,window=10s", "fixed-window:limit=20,window=20s"},
    {"sliding-window:limit=10,window=1s", "sliding-window:limit=25,window=1s"},
    {"sliding-window:limit=10,window=1s", "sliding-window:limit=25,window=2s"},
    {"fixed-window:limit=10,window=1d,align=calendar,timezone=Europe/Berlin",
     "fixed-window:limit=15,window=1d,align=calendar,timezone=Europe/Berlin"},
    {"fixed-window:limit=10,window=1d,align=calendar,timezone=Europe/Berlin",
     "fixed-window:limit=15,window=1d,align=calendar,timezone=America/New_York"},
};

TEST(ScriptOnChange, ProportionalCarriesEachAlgorithmAsTheLocalTableDoes) {
  for (const Change& c : kChanges) {
    same_as_local(c, proportional(parse(c.from)), proportional(parse(c.to)));
  }
}

TEST(ScriptOnChange, AStateWrittenUnderKeepIsRescaledFromTheLimitItReplaced) {
  for (const Change& c : kChanges) {
    const spec::LimitSpec from = parse(c.from);
    same_as_local(c, script_limit(from), proportional(parse(c.to), &from));
  }
}

TEST(ScriptOnChange, AnInstanceStillOnTheOldLimitRescalesBack) {
  // Until it reloads, an instance with the old numbers meets states the new ones wrote: each
  // is carried to its numbers, as a local table retuned back would be.
  const spec::LimitSpec small = parse("gcra:rate=1/m,burst=10");
  const spec::LimitSpec large = parse("gcra:rate=1/m,burst=20");
  ScriptRunner redis;
  LocalKey local(small);
  const std::string key = "sluice:{r:k}:gcra";
  for (int i = 0; i < 8; ++i) redis.decide(proportional(small), key, kT0), local.decide(kT0);
  local.retune(large, kT0 + kMs, true);
  expect_same(local.decide(kT0 + kMs), redis.decide(proportional(large), key, kT0 + kMs), "new");
  local.retune(small, kT0 + 2 * kMs, true);
  expect_same(local.decide(kT0 + 2 * kMs), redis.decide(proportional(small), key, kT0 + 2 * kMs),
              "old");
}

TEST(ScriptOnChange, ProportionalRecordsTheNumbersAfterTheStateAndKeepRecordsNone) {
  ScriptRunner redis;
  const spec::LimitSpec s = parse("fixed-window:limit=10,window=10s");
  redis.decide(proportional(s), "sluice:{r:p}:fixed-window", kT0);
  redis.decide(script_limit(s), "sluice:{r:k}:fixed-window", kT0);
  // The second, then the window's start and count; proportional adds 2 numbers: 10, 10 s.
  EXPECT_EQ(redis.stored("sluice:{r:p}:fixed-window"), "1769900000 0 1 2 10 10000000000");
  EXPECT_EQ(redis.stored("sluice:{r:k}:fixed-window"), "1769900000 0 1");
}

TEST(ScriptOnChange, KeepReadsTheStateAsItIs) {
  // Without proportional a changed limit reads what is stored under its own numbers: the 8
  // used of burst 10 stay used under burst 20 (the local table's keep for gcra too).
  const spec::LimitSpec from = parse("gcra:rate=1/m,burst=10");
  const spec::LimitSpec to = parse("gcra:rate=1/m,burst=20");
  ScriptRunner redis;
  LocalKey local(from);
  for (int i = 0; i < 8; ++i)
    redis.decide(script_limit(from), "sluice:{r:k}:gcra", kT0), local.decide(kT0);
  local.retune(to, kT0 + kMs, false);
  const core::Decision d = redis.decide(script_limit(to), "sluice:{r:k}:gcra", kT0 + kMs);
  expect_same(local.decide(kT0 + kMs), d, "keep");
  EXPECT_EQ(d.remaining, 12);
}

TEST(RemoteLimitOnChange, ResetNamesTheKeysByTheLimitInTheSameSlot) {
  RemoteLimitOptions o;
  o.on_change = OnChange::kReset;
  auto ten = RemoteLimit::make("per-user", parse("gcra:rate=10/s,burst=5"), o);
  auto twenty = RemoteLimit::make("per-user", parse("gcra:rate=20/s,burst=5"), o);
  ASSERT_TRUE(ten.ok() && twenty.ok());
  // The first 8 hex digits of the SHA-1 of the canonical text: printf "gcra:rate=10/s,burst=5" |
  // sha1sum
  EXPECT_EQ((*ten)->state_key("alice"), "sluice:{per-user:alice}:gcra:c41a8592");
  EXPECT_NE((*ten)->state_key("alice"), (*twenty)->state_key("alice"));
  EXPECT_EQ(key_slot((*ten)->state_key("alice")), key_slot((*twenty)->state_key("alice")));
  // keep (the default) and proportional keep today's names.
  o.on_change = OnChange::kProportional;
  auto kept = RemoteLimit::make("per-user", parse("gcra:rate=10/s,burst=5"), {});
  auto scaled = RemoteLimit::make("per-user", parse("gcra:rate=10/s,burst=5"), o);
  EXPECT_EQ((*kept)->state_key("alice"), "sluice:{per-user:alice}:gcra");
  EXPECT_EQ((*scaled)->state_key("alice"), "sluice:{per-user:alice}:gcra");
}

}  // namespace
}  // namespace sluice::backend::redis::testing
