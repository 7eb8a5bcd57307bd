// The key look-up and reset handlers (key_handlers.hpp).
#include "key_handlers.hpp"

#include <boost/json/object.hpp>
#include <memory>
#include <string>
#include <utility>

#include "check_handlers.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

// The ask's views point into `rule` and `key`, kept with the outcome until it is complete.
struct KeyLook {
  std::string rule;
  std::string key;
  engine::Outcome out;
};

unsigned error_status(engine::ErrorKind kind) {
  switch (kind) {
    case engine::ErrorKind::kUnknownRule:
    case engine::ErrorKind::kNoBlocks:
      return 404;
    case engine::ErrorKind::kNotResettable:
      return 409;
    case engine::ErrorKind::kUnavailable:
      return 503;
    default:
      return 400;
  }
}

// A key's block: {"rule","key","blocked","retry_after_ms"}, with "unblocked" after a DELETE.
Reply block_answer(const KeyLook& k, bool unblock) {
  const core::Decision& d = k.out.total;
  json::object o;
  o["rule"] = k.rule;
  o["key"] = k.key;
  if (unblock) o["unblocked"] = k.out.key_seen;
  o["blocked"] = k.out.key_seen && !unblock;
  o["retry_after_ms"] = k.out.key_seen && !unblock ? ceil_ms(d.retry_after) : std::int64_t{0};
  return json_reply(200, o);
}

Reply answer(const KeyLook& k, engine::KeyOp op) {
  const engine::Outcome& out = k.out;
  if (out.verdict == engine::Verdict::kInvalid) {
    return error_reply(error_status(out.error_kind), out.error,
                       engine::error_field(out.error_kind));
  }
  if (op == engine::KeyOp::kBlock || op == engine::KeyOp::kUnblock) {
    return block_answer(k, op == engine::KeyOp::kUnblock);
  }
  const bool reset = op == engine::KeyOp::kReset;
  const core::Decision& d = out.total;
  const config::RuleSet& rules = out.rules();
  const config::Rule* rule = out.applied.empty() ? nullptr : out.applied.front().rule;
  json::object o;
  o["rule"] = k.rule;
  o["key"] = k.key;
  o["storage"] =
      rule != nullptr && rules.storage_of(*rule) == config::Storage::kRedis ? "redis" : "local";
  o["seen"] = out.key_seen;
  if (reset) o["reset"] = true;
  o["allowed"] = d.allowed;
  o["remaining"] = d.remaining;
  o["limit"] = d.limit;
  o["retry_after_ms"] = d.retry_after == core::kNever ? std::int64_t{-1} : ceil_ms(d.retry_after);
  o["reset_after_ms"] = ceil_ms(d.reset_after);
  o["delay_ms"] = ceil_ms(d.delay);
  return json_reply(200, o);
}

}  // namespace

Reply key_state(engine::Loop& loop, std::string_view rule, std::string_view key, engine::KeyOp op,
                core::Nanos now) {
  auto k = std::make_shared<KeyLook>();
  k->rule = std::string(rule);
  k->key = std::string(key);
  const engine::KeyAsk ask{k->rule, k->key, op};
  if (loop.decide(ask, now, k->out) == engine::Progress::kDone) return answer(*k, op);
  Reply reply;
  reply.later = [&loop, k, op](std::function<void(Reply)> done) {
    loop.async_complete(k->out, [k, op, done = std::move(done)] { done(answer(*k, op)); });
  };
  return reply;
}

}  // namespace sluice::server
