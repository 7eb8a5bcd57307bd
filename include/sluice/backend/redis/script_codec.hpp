// The wire form of decisions for Sluice's Redis script (src/backend/redis/lua/dispatch.lua):
// building a batch's KEYS/ARGV and reading its reply back into core decisions. Pure: no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/backend/redis/reply.hpp"
#include "sluice/backend/redis/wire_args.hpp"
#include "sluice/core/calendar.hpp"
#include "sluice/core/decision.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/core/time.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::backend::redis {

// Doubles in Redis's Lua are exact for integers up to 2^53 (104 days of nanoseconds); a cost
// or duration beyond it is refused before it is sent (the request reports overflow).
inline constexpr std::int64_t kScriptExact = std::int64_t{1} << 53;

// One limit as the script reads it: the algorithm name and its Params fields in declaration
// order (a Rate is count then period), written so that a double parses them back exactly.
struct ScriptLimit {
  std::string algorithm;
  std::vector<std::string> params;
  // A refused request is charged all the same (a rule's count_denied): flag "d" on the wire.
  bool count_denied = false;
  // A key it refuses is blocked this long (a rule's on_deny: block): flag "bMS"; 0 = never.
  std::int64_t block_ms = 0;
  // A decision charges this limit this much, whatever the request's cost (a rule's reserve,
  // settled after the response): flag "rN"; 0 = the request's cost.
  std::int64_t cost = 0;
  // A calendar window (align=calendar): the bounds of the windows around the instance's Unix
  // time (calendar_bounds), which change with it: flag "c", set per batch. Empty: none.
  std::vector<std::string> calendar = {};
  // on_change: proportional: flag "p". A state records the params it was written under and is
  // rescaled from them when they differ; `replaced` are the params of the limit this one
  // replaced, assumed for a state that records none (written under on_change: keep).
  bool proportional = false;
  std::vector<std::string> replaced = {};
};

// `lease_ttl` is how long a concurrency lease lives in Redis if its holder never releases it
// (a crashed instance); unused by the time-based algorithms. A calendar window's params end
// with a number naming its time zone (so a change of zone starts afresh, as locally).
ScriptLimit script_limit(const spec::LimitSpec& spec, core::Nanos lease_ttl = 0);

// The calendar windows around `unix_now`: the previous one's start, the current one's start,
// the next one's start and its end, in Unix seconds. The script counts in whichever of the three
// holds Redis's clock, so an instance's clock may be off by up to a window.
using CalendarBounds = std::array<std::int64_t, 4>;
CalendarBounds calendar_bounds(const core::Calendar& calendar, core::Nanos unix_now);
// `limit` (a calendar window's) with those bounds.
ScriptLimit with_calendar_bounds(ScriptLimit limit, const CalendarBounds& bounds);

enum class RequestKind : char {
  kDecide = 'd',     // decide (concurrency: acquire a lease)
  kTake = 't',       // take up to `cost` permits (leasing); one limit
  kRelease = 'r',    // release the concurrency lease whose id is `cost`; one limit
  kRenew = 'w',      // renew that lease for another lease_ttl; one limit; extra 1 if held
  kPeek = 'p',       // the key's state without charging it (core/peek.hpp); one limit
  kReset = 'x',      // forget the key (DEL), then its state as kPeek says; one limit
  kBlockPeek = 'b',  // the key's block (on_deny: block): refused until it ends; one limit
  kUnblock = 'u',    // lift the key's block; one limit; extra 1 when it was blocked
  kSettle = 's',     // charge `cost` more (negative: give part of a reserve back), then the
                     // key's state as kPeek says (core/settle.hpp); one limit
};

// The clock a batch decides at: Redis's own TIME (every instance shares it) or a given
// instant (replay's virtual time; a caller that must use its own clock).
struct ScriptTime {
  bool redis_time = true;
  core::Nanos now = 0;  // when !redis_time: nanoseconds since the clock's zero, >= 0
};

// One EVALSHA's arguments: limits and keys are listed once each, then the requests in order.
class ScriptBatch {
 public:
  explicit ScriptBatch(ScriptTime time);
  // Empty again, at `time`, keeping the buffers' memory: one batch object serves every call.
  void reset(ScriptTime time);

  // Index of a limit definition in this batch (repeated definitions are the caller's care).
  int add_limit(const ScriptLimit& limit);
  // Index of a state key in this batch; the same key text returns the same index.
  int add_key(std::string_view key);
  // refs: (limit index, key index) per limit the request is decided against, all must pass.
  // `at`: this request's own instant (replay's virtual time line), else the batch's.
  void add_request(RequestKind kind, std::int64_t cost, core::Nanos max_wait,
                   const std::vector<std::pair<int, int>>& refs,
                   std::optional<core::Nanos> at = std::nullopt);

  std::size_t requests() const { return per_request_.size(); }
  // The number of limits of each request, in order: what the reply is split by.
  const std::vector<int>& limits_per_request() const { return per_request_; }
  std::size_t key_count() const { return key_end_.size(); }
  std::string_view key(std::size_t i) const;  // i < key_count()
  std::vector<std::string> keys() const;
  // The whole ARGV (limit definitions first, then the requests), read back from the wire.
  std::vector<std::string> args() const;
  // The keys, then the whole ARGV, as RESP bulk strings: EVALSHA's tail after numkeys. The
  // store's path: written once into one buffer as the batch was built, copied once here.
  WireArgs wire() const;

 private:
  // Each part in RESP as it is added (bulk strings), so no argument is a string of its own.
  std::string head_;  // protocol, time
  std::string limits_;
  std::size_t limit_args_ = 0;
  int limit_count_ = 0;   // written between head_ and limits_ in wire()
  std::string requests_;  // flattened
  std::size_t request_args_ = 0;
  std::string key_text_;                // every key's text, one after another
  std::vector<std::uint32_t> key_end_;  // where key i ends in key_text_
  // Past a few keys: their hashes, and an open-addressing table of key index + 1 (0: empty).
  std::vector<std::size_t> key_hash_;
  std::vector<int> table_;
  void place(std::size_t i);
  void rehash(std::size_t size);
  std::vector<int> per_request_;
};

// One limit's answer to one request.
struct LimitAnswer {
  core::Decision decision;
  // take: permits granted; concurrency acquire: the lease id; a refusal that started the key's
  // block (on_deny): when it ends, Unix ms (Redis's clock)
  std::int64_t extra = 0;
};

// A request's answers, one per limit in the order it was added, and their all-must-pass fold.
struct RequestAnswer {
  std::vector<LimitAnswer> limits;
  core::Decision combined;
};

// The reply is a flat array of 8 integers per limit per request. Errors name what is wrong
// (an error reply, a short array): a script or protocol mismatch, never silently read.
core::Expected<std::vector<RequestAnswer>> decode_reply_integers(
    const std::vector<long long>& flat, const std::vector<int>& limits_per_request);

// Every limit's answer in a batch, in order (request 0's limits, then request 1's, ...), from
// what the client delivered: read from the reply where it stands, one allocation per batch (the
// store's path). A Failure, an error reply or a malformed reply is an error naming it.
core::Expected<std::vector<LimitAnswer>> decode_limits(const Outcome& outcome, std::size_t limits);

// The same, split by request, each with its all-must-pass fold.
core::Expected<std::vector<RequestAnswer>> decode_outcome(
    const Outcome& outcome, const std::vector<int>& limits_per_request);

}  // namespace sluice::backend::redis
