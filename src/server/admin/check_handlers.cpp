// The decision API's handlers (check_handlers.hpp).
#include "check_handlers.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "check_input.hpp"
#include "common/limit_fields.hpp"

namespace sluice::server {

std::int64_t ceil_ms(core::Nanos d) {
  if (d <= 0) return 0;
  return d / core::kNanosPerMilli + (d % core::kNanosPerMilli != 0 ? 1 : 0);
}

namespace {

namespace json = boost::json;

// One check: its input (the ask's views point into it) and the engine's outcome.
struct Check {
  CheckInput input;
  engine::Outcome out;
};

engine::Ask ask_of(const CheckInput& in) {
  if (in.limit.empty()) {
    return engine::RuleAsk{in.rule, in.key, in.cost, engine::Via::kCheckApi, in.tier};
  }
  return engine::InlineAsk{in.limit, in.key, in.cost, in.max_wait};
}

// The status of an ask the engine did not decide: a rule that does not exist is 404 on its own
// path (GET /v1/check/{rule}), a full table of permits 503 (try again later), the rest 400.
unsigned error_status(const engine::Outcome& out, bool rule_in_path) {
  switch (out.error_kind) {
    case engine::ErrorKind::kUnknownRule:
      return rule_in_path ? 404 : 400;
    case engine::ErrorKind::kExhausted:
      return 503;
    default:
      return 400;
  }
}

std::optional<InputError> error_of(const engine::Outcome& out) {
  if (out.verdict != engine::Verdict::kInvalid) return std::nullopt;
  return InputError{out.error, std::string(engine::error_field(out.error_kind))};
}

bool is_dry_run(const engine::Outcome& out) {
  return !out.applied.empty() && !out.applied.front().enforced;
}

// A dry-run rule never asks the caller to block: `allowed` is what to do, `dry_run_denied`
// what an enforcing rule would have said.
json::object decision_json(const engine::Outcome& out) {
  const core::Decision& d = out.total;
  json::object o;
  o["allowed"] = out.verdict == engine::Verdict::kAllow;
  o["delay_ms"] = ceil_ms(out.delay);
  o["remaining"] = d.remaining;
  o["retry_after_ms"] = d.retry_after == core::kNever ? std::int64_t{-1} : ceil_ms(d.retry_after);
  o["reset_after_ms"] = ceil_ms(d.reset_after);
  o["limit"] = d.limit;
  o["dry_run"] = is_dry_run(out);
  o["dry_run_denied"] = out.dry_run_denied();
  if (!out.lease_token.empty()) {
    o["lease"] = out.lease_token;
    o["lease_ttl_ms"] = ceil_ms(out.lease_ttl);
  }
  return o;
}

// The outcome's RateLimit fields (Retry-After only when the caller is told to deny).
void add_headers(Reply& reply, const engine::Outcome& out) {
  LimitFields fields;
  limit_fields(out, fields);
  const config::RuleSet& rules = out.rules();
  for (auto& [name, value] :
       proto::http::ratelimit_field_pairs(fields, field_choice(rules), retry_after(out))) {
    reply.headers.emplace_back(std::string(name), std::move(value));
  }
  if (out.dry_run_denied()) reply.headers.emplace_back(kDryRunDeniedHeader, "true");
  if (!out.lease_token.empty()) {
    reply.headers.emplace_back(kLeaseHeader, out.lease_token);
    reply.headers.emplace_back(kLeaseTtlHeader, std::to_string(core::ceil_seconds(out.lease_ttl)));
  }
}

json::object error_json(const InputError& e) {
  json::object o;
  o["error"] = e.error;
  o["field"] = e.field;
  return o;
}

Reply refuse(unsigned status, const InputError& e) { return error_reply(status, e.error, e.field); }

// Decides; true when Redis is still to be asked (complete with loop.async_complete).
bool start(engine::Loop& loop, Check& c, core::Nanos now) {
  return loop.decide(ask_of(c.input), now, c.out) == engine::Progress::kPending;
}

// Completes `c` (asking Redis when needed) and hands it to `finish` on the loop.
void complete(engine::Loop& loop, std::shared_ptr<Check> c, std::function<void(Check&)> finish) {
  loop.async_complete(c->out, [&loop, c, finish = std::move(finish)] {
    loop.release(c->out);
    finish(*c);
  });
}

json::value result_json(const engine::Outcome& out) {
  if (auto e = error_of(out)) return error_json(*e);
  return decision_json(out);
}

Reply batch(engine::Loop& loop, const json::value& checks, core::Nanos now) {
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
  std::vector<std::pair<std::size_t, std::shared_ptr<Check>>> pending;
  for (const json::value& item : items) {
    if (!item.is_object()) {
      results.push_back(error_json({"each check must be a JSON object", "checks"}));
      continue;
    }
    ParsedCheck parsed = parse_check(item.get_object());
    if (parsed.error) {
      results.push_back(error_json(*parsed.error));
      continue;
    }
    auto c = std::make_shared<Check>();
    c->input = std::move(parsed.input);
    if (start(loop, *c, now)) {
      pending.emplace_back(results.size(), std::move(c));
      results.push_back(nullptr);
      continue;
    }
    results.push_back(result_json(c->out));
  }
  if (pending.empty()) {
    json::object body;
    body["results"] = std::move(results);
    return json_reply(200, body);
  }
  // The Redis checks go out together (one loop turn, batched by the store); the reply is
  // written when the last one is back.
  Reply reply;
  auto held = std::make_shared<decltype(pending)>(std::move(pending));
  reply.later = [&loop, results = std::move(results), held](std::function<void(Reply)> done) {
    struct Gather {
      json::array results;
      std::size_t left;
      std::function<void(Reply)> done;
    };
    auto g = std::make_shared<Gather>(Gather{results, held->size(), std::move(done)});
    for (auto& [index, c] : *held) {
      complete(loop, c, [g, index = index](Check& done_check) {
        g->results[index] = result_json(done_check.out);
        if (--g->left > 0) return;
        json::object body;
        body["results"] = std::move(g->results);
        g->done(json_reply(200, body));
      });
    }
  };
  return reply;
}

// The reply of one check, now or (Redis) later: `finish` builds it from the outcome.
Reply one(engine::Loop& loop, CheckInput input, core::Nanos now,
          std::function<Reply(const engine::Outcome&)> finish) {
  auto c = std::make_shared<Check>();
  c->input = std::move(input);
  if (!start(loop, *c, now)) {
    Reply r = finish(c->out);
    loop.release(c->out);
    return r;
  }
  Reply reply;
  reply.later = [&loop, c, finish = std::move(finish)](std::function<void(Reply)> done) {
    complete(loop, c, [finish, done](Check& checked) { done(finish(checked.out)); });
  };
  return reply;
}

}  // namespace

Reply post_check(engine::Loop& loop, std::string_view body, core::Nanos now) {
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  if (ec) return refuse(400, body_error(body, ec));
  if (!doc.is_object()) {
    return error_reply(400, "the body must be a JSON object: one check or {\"checks\": [...]}",
                       "body");
  }
  const json::object& object = doc.get_object();
  if (const json::value* checks = object.if_contains("checks")) {
    if (object.size() != 1) {
      return error_reply(400, "a batch has only 'checks'; put each check's fields in it", "checks");
    }
    return batch(loop, *checks, now);
  }
  ParsedCheck parsed = parse_check(object);
  if (parsed.error) return refuse(400, *parsed.error);
  return one(loop, std::move(parsed.input), now, [](const engine::Outcome& out) {
    if (auto e = error_of(out)) return refuse(error_status(out, false), *e);
    Reply reply = json_reply(200, decision_json(out));
    add_headers(reply, out);
    return reply;
  });
}

Reply get_check(engine::Loop& loop, std::string rule, std::string_view query, core::Nanos now) {
  ParsedCheck parsed = parse_check_query(std::move(rule), query);
  if (parsed.error) return refuse(400, *parsed.error);
  return one(loop, std::move(parsed.input), now, [](const engine::Outcome& out) {
    if (auto e = error_of(out)) return refuse(error_status(out, true), *e);
    const bool allowed = out.verdict == engine::Verdict::kAllow;
    Reply reply = allowed ? text_reply(204, {}, {}) : json_reply(429, decision_json(out));
    if (allowed) reply.delay = std::chrono::nanoseconds(out.delay);
    add_headers(reply, out);
    return reply;
  });
}

Reply post_release(engine::Loop& loop, std::string_view body) {
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  if (ec) return error_reply(400, "the body is not JSON: " + ec.message(), "body");
  const json::object* object = doc.if_object();
  const json::value* lease = object != nullptr ? object->if_contains("lease") : nullptr;
  if (lease == nullptr || !lease->is_string() || object->size() != 1) {
    return error_reply(400, "the body must be {\"lease\": TOKEN}, the token a check handed out",
                       "lease");
  }
  return delete_lease(loop, std::string_view(lease->get_string()));
}

Reply delete_lease(engine::Loop& loop, std::string_view token) {
  if (!loop.release_lease(token)) {
    return error_reply(404, "no permit is held under this token (released, or expired)", "lease");
  }
  json::object o;
  o["released"] = true;
  return json_reply(200, o);
}

}  // namespace sluice::server
