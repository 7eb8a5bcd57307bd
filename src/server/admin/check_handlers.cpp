// The decision API's handlers (check_handlers.hpp).
#include "check_handlers.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <optional>
#include <utility>

#include "check_input.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

// Durations go out in whole milliseconds, rounded up: a client that waits retry_after_ms is
// never early.
std::int64_t ceil_ms(core::Nanos d) {
  if (d <= 0) return 0;
  return d / core::kNanosPerMilli + (d % core::kNanosPerMilli != 0 ? 1 : 0);
}

struct Outcome {
  rules::CheckResult result;
  std::optional<InputError> error;
};

Outcome decide(rules::Engine& engine, const CheckInput& in, core::Nanos now) {
  Outcome out;
  out.result = in.limit.empty() ? engine.check(in.rule, in.key, in.cost, now)
                                : engine.check_inline(in.limit, in.key, in.cost, in.max_wait, now);
  using Status = rules::CheckResult::Status;
  const rules::CheckResult& r = out.result;
  if (r.status == Status::kUnknownRule) {
    out.error = InputError{r.error, "rule"};
  } else if (r.status == Status::kBadLimit) {
    out.error = InputError{r.error, "limit"};
  } else if (r.decision.overflow) {
    out.error = InputError{"cost " + std::to_string(in.cost) +
                               " is too large for this limit (its wait leaves the time range)",
                           "cost"};
  }
  return out;
}

bool dry_run_denied(const rules::CheckResult& r) { return r.dry_run && !r.decision.allowed; }

// A dry-run rule never asks the caller to block: `allowed` is what to do, `dry_run_denied`
// what an enforcing rule would have said.
json::object decision_json(const rules::CheckResult& r) {
  const core::Decision& d = r.decision;
  json::object o;
  o["allowed"] = d.allowed || r.dry_run;
  o["delay_ms"] = ceil_ms(d.delay);
  o["remaining"] = d.remaining;
  o["retry_after_ms"] = d.retry_after == core::kNever ? std::int64_t{-1} : ceil_ms(d.retry_after);
  o["reset_after_ms"] = ceil_ms(d.reset_after);
  o["limit"] = d.limit;
  o["dry_run"] = r.dry_run;
  o["dry_run_denied"] = dry_run_denied(r);
  return o;
}

// The engine's RateLimit headers; Retry-After only when the caller is told to deny.
void add_headers(Reply& reply, rules::CheckResult& r) {
  for (auto& [name, value] : r.headers) {
    if (r.dry_run && name == "Retry-After") continue;
    reply.headers.emplace_back(std::move(name), std::move(value));
  }
  if (dry_run_denied(r)) reply.headers.emplace_back(kDryRunDeniedHeader, "true");
}

json::object error_json(const InputError& e) {
  json::object o;
  o["error"] = e.error;
  o["field"] = e.field;
  return o;
}

Reply refuse(unsigned status, const InputError& e) { return error_reply(status, e.error, e.field); }

Reply batch(rules::Engine& engine, const json::value& checks, core::Nanos now) {
  if (!checks.is_array()) {
    return error_reply(400, "'checks' must be an array of checks", "checks");
  }
  const json::array& items = checks.get_array();
  if (items.size() > kMaxBatchChecks) {
    return error_reply(400,
                       "too many checks in one batch: " + std::to_string(items.size()) +
                           " (at most " + std::to_string(kMaxBatchChecks) + ")",
                       "checks");
  }
  json::array results;
  results.reserve(items.size());
  for (const json::value& item : items) {
    if (!item.is_object()) {
      results.push_back(error_json({"each check must be a JSON object", "checks"}));
      continue;
    }
    const ParsedCheck parsed = parse_check(item.get_object());
    if (parsed.error) {
      results.push_back(error_json(*parsed.error));
      continue;
    }
    const Outcome outcome = decide(engine, parsed.input, now);
    results.push_back(outcome.error ? error_json(*outcome.error) : decision_json(outcome.result));
  }
  json::object body;
  body["results"] = std::move(results);
  return json_reply(200, body);
}

}  // namespace

Reply post_check(rules::Engine& engine, std::string_view body, core::Nanos now) {
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  if (ec) return error_reply(400, "the body is not JSON: " + ec.message(), "body");
  if (!doc.is_object()) {
    return error_reply(400, "the body must be a JSON object: one check or {\"checks\": [...]}",
                       "body");
  }
  const json::object& object = doc.get_object();
  if (const json::value* checks = object.if_contains("checks")) {
    if (object.size() != 1) {
      return error_reply(400, "a batch has only 'checks'; put each check's fields in it", "checks");
    }
    return batch(engine, *checks, now);
  }
  const ParsedCheck parsed = parse_check(object);
  if (parsed.error) return refuse(400, *parsed.error);
  Outcome outcome = decide(engine, parsed.input, now);
  if (outcome.error) return refuse(400, *outcome.error);
  Reply reply = json_reply(200, decision_json(outcome.result));
  add_headers(reply, outcome.result);
  return reply;
}

Reply get_check(rules::Engine& engine, std::string rule, std::string_view query, core::Nanos now) {
  const ParsedCheck parsed = parse_check_query(std::move(rule), query);
  if (parsed.error) return refuse(400, *parsed.error);
  Outcome outcome = decide(engine, parsed.input, now);
  if (outcome.error) return refuse(outcome.error->field == "rule" ? 404 : 400, *outcome.error);
  rules::CheckResult& r = outcome.result;
  const bool allowed = r.decision.allowed || r.dry_run;
  Reply reply = allowed ? text_reply(204, {}, {}) : json_reply(429, decision_json(r));
  if (allowed) reply.delay = std::chrono::nanoseconds(r.decision.delay);
  add_headers(reply, r);
  return reply;
}

}  // namespace sluice::server
