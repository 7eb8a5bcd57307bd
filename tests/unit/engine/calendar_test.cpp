// Calendar quotas in the engine: a daily rule in Europe/Berlin decides on the injected wall
// clock while the decisions' `now` is steady time, and its RateLimit reset and Retry-After
// point at the local midnight; a GCRA rule beside it keeps the steady time line.
#include <gtest/gtest.h>

#include <string>

#include "common/limit_fields.hpp"
#include "engine_fixture.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::engine {
namespace {

constexpr core::Nanos kSec = core::kNanosPerSecond;
constexpr core::Nanos kFeb1Berlin = 1769900400 * kSec;  // 2026-02-01 00:00 CET

const std::string kDaily =
    "listen: 127.0.0.1:8080\n"
    "upstreams:\n  app: {servers: [127.0.0.1:8081]}\n"
    "routes:\n  - {name: all, match: {path_prefix: /}, upstream: app, rules: [daily, burst]}\n"
    "rules:\n"
    "  daily:\n"
    "    limit: fixed-window:limit=3,window=1d,align=calendar,timezone=Europe/Berlin\n"
    "    key: header:X-Api-Key\n"
    "  burst: {limit: \"gcra:rate=1/s,burst=100\", key: header:X-Api-Key}\n";

struct Reset {
  std::int64_t daily = -2;
  core::Nanos retry_after = -2;
};

Reset reset_of(const Outcome& out) {
  server::LimitFields fields;
  server::limit_fields(out, fields);
  Reset r;
  for (const auto& f : fields) {
    if (f.name == "daily") r.daily = f.reset_seconds;
  }
  r.retry_after = server::retry_after(out);
  return r;
}

TEST(EngineCalendar, TheFourthRequestOfTheDayIsRefusedUntilBerlinMidnight) {
  core::ManualClock wall(kFeb1Berlin - 90 * kSec);  // Jan 31, 23:58:30 in Berlin
  const core::Nanos steady = 5 * kSec;              // the steady clock knows nothing of dates
  Engine e(load_rules(kDaily), steady, &wall);
  const std::vector<Header> headers = {{"X-Api-Key", "k1"}};
  const RequestView r{"GET", "example.com", "/x", "", "10.1.1.1", headers};
  for (int i = 0; i < 3; ++i) {
    Outcome out;
    e.decide(r, steady, out);
    ASSERT_EQ(out.verdict, Verdict::kAllow) << i;
    EXPECT_EQ(reset_of(out).daily, 90);  // seconds to Feb 1, 00:00 local
  }
  Outcome fourth;
  e.decide(r, steady, fourth);
  EXPECT_EQ(fourth.verdict, Verdict::kDeny);
  EXPECT_EQ(reset_of(fourth).daily, 90);
  EXPECT_EQ(reset_of(fourth).retry_after, 90 * kSec);

  wall.set(kFeb1Berlin);  // midnight: a new day, whatever the steady clock says
  Outcome next;
  e.decide(r, steady + kSec, next);
  EXPECT_EQ(next.verdict, Verdict::kAllow);
  EXPECT_EQ(reset_of(next).daily, 86400);
}

TEST(EngineCalendar, TheCheckApiCountsTheSameCalendarDay) {
  core::ManualClock wall(kFeb1Berlin - 10 * kSec);
  Engine e(load_rules(kDaily), 0, &wall);
  for (int i = 0; i < 3; ++i) {
    Outcome out;
    e.decide(RuleAsk{"daily", "k2", 1}, 0, out);
    ASSERT_EQ(out.verdict, Verdict::kAllow) << i;
  }
  Outcome peek;
  e.decide(KeyAsk{"daily", "k2", KeyOp::kPeek}, 0, peek);
  EXPECT_EQ(peek.total.remaining, 0);
  Outcome denied;
  e.decide(RuleAsk{"daily", "k2", 1}, 0, denied);
  EXPECT_EQ(denied.verdict, Verdict::kDeny);
  EXPECT_EQ(denied.total.retry_after, 10 * kSec);
  wall.set(kFeb1Berlin + kSec);
  Outcome after;
  e.decide(KeyAsk{"daily", "k2", KeyOp::kPeek}, 0, after);
  EXPECT_EQ(after.total.remaining, 3);
}

TEST(EngineCalendar, ACalendarWindowMayBeKeptInRedis) {
  // The script counts in the window holding Redis's clock, among those the engine names from
  // its wall clock (tests/unit/redis/script_calendar_test.cpp).
  const std::string yaml =
      "listen: 127.0.0.1:8080\n"
      "redis: {url: redis://127.0.0.1:6379}\n"
      "upstreams:\n  app: {servers: [127.0.0.1:8081]}\n"
      "routes:\n  - {name: all, match: {path_prefix: /}, upstream: app, rules: [daily]}\n"
      "rules:\n"
      "  daily:\n"
      "    limit: fixed-window:limit=3,window=1d,align=calendar,timezone=Europe/Berlin\n"
      "    key: header:X-Api-Key\n"
      "    storage: redis\n"
      "    lease: 10\n";
  auto loaded = config::load_config_text(yaml, "test.yaml");
  EXPECT_TRUE(loaded.errors.empty()) << loaded.errors.front().format();
}

}  // namespace
}  // namespace sluice::engine
