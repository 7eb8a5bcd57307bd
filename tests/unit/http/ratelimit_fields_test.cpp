// The RateLimit fields as written into a response head: one policy item and one status item
// per limit, in draft-11's syntax (r, t) or draft-12's (a, w); a limit whose remaining is
// unknown (admitted fail-open) with no status item.
#include "sluice/proto/http/ratelimit_fields.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::proto::http {
namespace {

LimitField field(std::string_view name, std::int64_t q, std::int64_t w, std::int64_t r,
                 std::int64_t t, bool known = true) {
  LimitField f;
  f.name = name;
  f.quota = q;
  f.window_seconds = w;
  f.remaining = r;
  f.reset_seconds = t;
  f.known = known;
  return f;
}

std::string head(const std::vector<LimitField>& limits,
                 FieldChoice choice = {true, true, RateLimitDraft::k11}) {
  std::string out;
  append_ratelimit_fields(out, limits, choice, -1);
  return out;
}

TEST(RateLimitFields, EachLimitHasAPolicyItemAndAStatusItem) {
  EXPECT_EQ(head({field("a", 10, 60, 9, 60), field("b", 100, 60, 99, 60)}),
            "RateLimit-Policy: \"a\";q=10;w=60, \"b\";q=100;w=60\r\n"
            "RateLimit: \"a\";r=9;t=60, \"b\";r=99;t=60\r\n"
            "X-RateLimit-Limit: 10\r\nX-RateLimit-Remaining: 9\r\nX-RateLimit-Reset: 60\r\n");
}

TEST(RateLimitFields, AnUnknownRemainingKeepsItsPolicyButHasNoStatusNorLegacyPart) {
  // b was admitted fail-open with remaining -1: not "r=0", and not the tightest limit.
  EXPECT_EQ(head({field("a", 10, 60, 8, 60), field("b", 100, 60, -1, -1, false)}),
            "RateLimit-Policy: \"a\";q=10;w=60, \"b\";q=100;w=60\r\n"
            "RateLimit: \"a\";r=8;t=60\r\n"
            "X-RateLimit-Limit: 10\r\nX-RateLimit-Remaining: 8\r\nX-RateLimit-Reset: 60\r\n");
}

TEST(RateLimitFields, OnlyUnknownLimitsGiveThePolicyAndNoRateLimitField) {
  EXPECT_EQ(head({field("b", 100, 60, -1, -1, false)}), "RateLimit-Policy: \"b\";q=100;w=60\r\n");
}

TEST(RateLimitFields, Draft12NamesTheAvailableQuotaAAndTheEffectiveWindowW) {
  LimitField cc = field("cc", 10, 0, 0, -1);
  cc.concurrent = true;
  EXPECT_EQ(head({field("a", 10, 60, 9, 60), cc}, {true, false, RateLimitDraft::k12}),
            "RateLimit-Policy: \"a\";q=10;w=60, \"cc\";q=10;qu=\"concurrent-requests\"\r\n"
            "RateLimit: \"a\";a=9;w=60, \"cc\";a=0\r\n");
  EXPECT_EQ(FieldChoice{}.draft, RateLimitDraft::k12);  // the default: the latest draft
}

TEST(RateLimitFields, TheDraftChangesNeitherThePolicyNorTheLegacyFields) {
  const std::vector<LimitField> limits = {field("a", 10, 60, 9, 60)};
  const std::string eleven = head(limits, {true, true, RateLimitDraft::k11});
  const std::string twelve = head(limits, {true, true, RateLimitDraft::k12});
  EXPECT_EQ(eleven.substr(0, eleven.find("RateLimit: ")),
            twelve.substr(0, twelve.find("RateLimit: ")));
  EXPECT_EQ(eleven.substr(eleven.find("X-RateLimit")), twelve.substr(twelve.find("X-RateLimit")));
  EXPECT_EQ(head(limits, {false, false, RateLimitDraft::k12}), "");
}

// Names that are not sf-tokens (a rule may start with a digit, '.', '-' or '_'; an inline
// limit is named by its spec) are written as sf-strings, which both drafts take.
TEST(RateLimitFields, NamesAreStringsWhetherOrNotTheyAreTokens) {
  EXPECT_EQ(head({field("1min", 5, 60, 4, 60), field("gcra:rate=1/s,burst=2", 2, 2, 1, 1)},
                 {true, false, RateLimitDraft::k12}),
            "RateLimit-Policy: \"1min\";q=5;w=60, \"gcra:rate=1/s,burst=2\";q=2;w=2\r\n"
            "RateLimit: \"1min\";a=4;w=60, \"gcra:rate=1/s,burst=2\";a=1;w=1\r\n");
  std::string out;
  append_sf_string(out, "a\"b\\c\x01\xc3\xa9");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\"");
}

TEST(RateLimitFields, PairsCarryTheSameDraft) {
  const FieldPairs pairs =
      ratelimit_field_pairs(std::vector<LimitField>{field("a", 3, 60, 0, 20)},
                            {true, false, RateLimitDraft::k12}, 20 * core::kNanosPerSecond);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[1].first, "RateLimit");
  EXPECT_EQ(pairs[1].second, "\"a\";a=0;w=20");
  EXPECT_EQ(pairs[2].first, "Retry-After");
  EXPECT_EQ(pairs[2].second, "20");
}

TEST(RateLimitFields, AHeadSaysWhatThePairsSayForTheLongestNamesAndNumbers) {
  // A head is written into room made beforehand: names that are all escapes, concurrency
  // limits, every number at its widest, legacy fields and Retry-After must all fit, and say what
  // the pair list (written by plain appends) says. Appended after what the head already held.
  const std::string quotes(300, '"');
  const std::string slashes(77, '\\');
  std::vector<LimitField> limits;
  for (const std::string* name : {&quotes, &slashes, &quotes}) {
    LimitField f = field(*name, INT64_MIN, INT64_MAX, INT64_MAX, INT64_MIN);
    f.concurrent = true;
    limits.push_back(f);
  }
  limits.push_back(field("tight", INT64_MAX, INT64_MAX, INT64_MIN, INT64_MAX));
  const core::Nanos retry = INT64_MAX;
  std::string out = "HTTP/1.1 429 Too Many Requests\r\n";
  append_ratelimit_fields(out, limits, {true, true}, retry);
  std::string from_pairs = "HTTP/1.1 429 Too Many Requests\r\n";
  for (const auto& [name, value] : ratelimit_field_pairs(limits, {true, true}, retry)) {
    from_pairs += std::string(name) + ": " + value + "\r\n";
  }
  EXPECT_EQ(out, from_pairs);
  EXPECT_NE(out.find("\"\\\"\\\""), std::string::npos);  // a quote escaped
  EXPECT_NE(out.find("X-RateLimit-Remaining: 0\r\n"), std::string::npos);
}

}  // namespace
}  // namespace sluice::proto::http
