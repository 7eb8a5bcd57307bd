// The key look-up and reset handlers (key_handlers.hpp).
#include "key_handlers.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "check_handlers.hpp"
#include "sluice/core/settle.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

constexpr std::int64_t kMaxReportCost = core::kMaxStatedCost;

// The ask's views point into `rule` and `key`, kept with the outcome until it is complete.
struct KeyLook {
  std::string rule;
  std::string key;
  std::int64_t cost = 0;  // kReport
  engine::Outcome out;
};

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
    return error_reply(key_error_status(out.error_kind), out.error,
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
  if (op == engine::KeyOp::kReport) o["reported"] = k.cost;
  o["allowed"] = d.allowed;
  o["remaining"] = d.remaining;
  o["limit"] = d.limit;
  o["retry_after_ms"] = d.retry_after == core::kNever ? std::int64_t{-1} : ceil_ms(d.retry_after);
  o["reset_after_ms"] = ceil_ms(d.reset_after);
  o["delay_ms"] = ceil_ms(d.delay);
  return json_reply(200, o);
}

}  // namespace

unsigned key_error_status(engine::ErrorKind kind) {
  switch (kind) {
    case engine::ErrorKind::kUnknownRule:
    case engine::ErrorKind::kNoBlocks:
      return 404;
    case engine::ErrorKind::kNotResettable:
    case engine::ErrorKind::kNotSettlable:
      return 409;
    case engine::ErrorKind::kUnavailable:
      return 503;
    default:
      return 400;
  }
}

Reply key_state(engine::Loop& loop, std::string_view rule, std::string_view key, engine::KeyOp op,
                core::Nanos now, std::int64_t cost) {
  auto k = std::make_shared<KeyLook>();
  k->rule = std::string(rule);
  k->key = std::string(key);
  k->cost = cost;
  const engine::KeyAsk ask{k->rule, k->key, op, cost};
  if (loop.decide(ask, now, k->out) == engine::Progress::kDone) return answer(*k, op);
  Reply reply;
  reply.later = [&loop, k, op](std::function<void(Reply)> done) {
    loop.async_complete(k->out, [k, op, done = std::move(done)] { done(answer(*k, op)); });
  };
  return reply;
}

namespace {

// A report's cost or reserve: a whole number within what one request may cost.
std::optional<std::int64_t> amount(const json::object& o, std::string_view field, bool required,
                                   std::string& problem) {
  const json::value* v = o.if_contains(field);
  if (v == nullptr) {
    if (required) problem = std::string(field) + " is required (a whole number, 0 or more)";
    return required ? std::nullopt : std::optional<std::int64_t>(0);
  }
  if (!v->is_int64() || v->get_int64() < 0 || v->get_int64() > kMaxReportCost) {
    problem =
        std::string(field) + " must be a whole number from 0 to " + std::to_string(kMaxReportCost);
    return std::nullopt;
  }
  return v->get_int64();
}

}  // namespace

Reply post_report(engine::Loop& loop, std::string_view body, core::Nanos now) {
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  if (ec) return error_reply(400, "the body is not JSON: " + ec.message(), "body");
  const json::object* o = doc.if_object();
  if (o == nullptr) {
    return error_reply(400, "the body must be {\"rule\", \"key\", \"cost\", \"reserved\"}", "body");
  }
  for (const auto& [field, value] : *o) {
    if (field != "rule" && field != "key" && field != "cost" && field != "reserved") {
      return error_reply(
          400, "unknown field '" + std::string(field) + "' (accepted: rule, key, cost, reserved)",
          std::string(field));
    }
  }
  for (const char* field : {"rule", "key"}) {
    const json::value* v = o->if_contains(field);
    if (v == nullptr || !v->is_string() || v->get_string().empty()) {
      return error_reply(400, std::string(field) + " is required (a non-empty string)", field);
    }
  }
  std::string problem;
  const auto cost = amount(*o, "cost", true, problem);
  if (!cost) return error_reply(400, problem, "cost");
  const auto reserved = amount(*o, "reserved", false, problem);
  if (!reserved) return error_reply(400, problem, "reserved");
  return key_state(loop, std::string_view(o->at("rule").get_string()),
                   std::string_view(o->at("key").get_string()), engine::KeyOp::kReport, now,
                   *cost - *reserved);
}

}  // namespace sluice::server
