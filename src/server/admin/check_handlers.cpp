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
#include "sluice/core/clock.hpp"

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
  engine::CheckResult result;
  std::optional<InputError> error;
  std::int64_t cost = 1;  // as asked, for an error found after Redis answers
};

Outcome decide(engine::Engine& engine, const CheckInput& in, core::Nanos now) {
  Outcome out;
  out.cost = in.cost;
  out.result = in.limit.empty() ? engine.check(in.rule, in.key, in.cost, now)
                                : engine.check_inline(in.limit, in.key, in.cost, in.max_wait, now);
  using Status = engine::CheckResult::Status;
  const engine::CheckResult& r = out.result;
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

// A rule kept in Redis: ask the store, complete the result, hand it on. Concurrency permits
// go back at once (the check API has no request lifetime to hold them for).
void resolve(engine::Engine& engine, backend::redis::Store* redis, Outcome outcome,
             std::function<void(Outcome)> done) {
  if (redis == nullptr) {
    // No store on this loop (a redis url added after start): the rule's failure policy.
    auto answer =
        backend::redis::answer_without_store(*outcome.result.remote, core::SteadyClock::read());
    outcome.result = engine.finish_check(std::move(outcome.result), std::move(answer));
    done(std::move(outcome));
    return;
  }
  backend::redis::Query query = *outcome.result.remote;
  auto shared = std::make_shared<Outcome>(std::move(outcome));
  redis->decide(std::move(query), [&engine, redis, shared,
                                   done = std::move(done)](backend::redis::Answer answer) {
    shared->result = engine.finish_check(std::move(shared->result), std::move(answer));
    for (const auto& lease : shared->result.remote_leases) redis->release(lease);
    shared->result.remote_leases.clear();
    if (shared->result.decision.overflow) {
      shared->error = InputError{"cost " + std::to_string(shared->cost) +
                                     " is too large for this limit (its wait leaves the range "
                                     "Redis computes exactly)",
                                 "cost"};
    }
    done(std::move(*shared));
  });
}

bool dry_run_denied(const engine::CheckResult& r) { return r.dry_run && !r.decision.allowed; }

// A dry-run rule never asks the caller to block: `allowed` is what to do, `dry_run_denied`
// what an enforcing rule would have said.
json::object decision_json(const engine::CheckResult& r) {
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
void add_headers(Reply& reply, engine::CheckResult& r) {
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

Reply batch(engine::Engine& engine, backend::redis::Store* redis, const json::value& checks,
            core::Nanos now) {
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
  std::vector<std::pair<std::size_t, Outcome>> remote;  // answered by Redis, in the reply later
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
    Outcome outcome = decide(engine, parsed.input, now);
    if (!outcome.error && outcome.result.remote) {
      remote.emplace_back(results.size(), std::move(outcome));
      results.push_back(nullptr);
      continue;
    }
    results.push_back(outcome.error ? error_json(*outcome.error) : decision_json(outcome.result));
  }
  if (remote.empty()) {
    json::object body;
    body["results"] = std::move(results);
    return json_reply(200, body);
  }
  // The Redis checks go out together (one loop turn, batched by the store); the reply is
  // written when the last one is back.
  Reply reply;
  // std::function wants a copyable callable; the outcomes (with their leases) are move-only.
  auto pending = std::make_shared<std::vector<std::pair<std::size_t, Outcome>>>(std::move(remote));
  reply.later = [&engine, redis, results = std::move(results),
                 pending](std::function<void(Reply)> done) mutable {
    struct Gather {
      json::array results;
      std::size_t left;
      std::function<void(Reply)> done;
    };
    auto g = std::make_shared<Gather>(Gather{std::move(results), pending->size(), std::move(done)});
    for (auto& [index, outcome] : *pending) {
      resolve(engine, redis, std::move(outcome), [g, index = index](Outcome o) {
        g->results[index] = o.error ? error_json(*o.error) : decision_json(o.result);
        if (--g->left > 0) return;
        json::object body;
        body["results"] = std::move(g->results);
        g->done(json_reply(200, body));
      });
    }
  };
  return reply;
}

// A reply that needs Redis first: `finish` builds it from the completed outcome.
Reply after_redis(engine::Engine& engine, backend::redis::Store* redis, Outcome outcome,
                  std::function<Reply(Outcome&)> finish) {
  Reply reply;
  auto held = std::make_shared<Outcome>(std::move(outcome));  // move-only, see batch()
  reply.later = [&engine, redis, held,
                 finish = std::move(finish)](std::function<void(Reply)> done) mutable {
    resolve(engine, redis, std::move(*held),
            [finish = std::move(finish), done = std::move(done)](Outcome o) { done(finish(o)); });
  };
  return reply;
}

}  // namespace

Reply post_check(engine::Engine& engine, backend::redis::Store* redis, std::string_view body,
                 core::Nanos now) {
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
    return batch(engine, redis, *checks, now);
  }
  const ParsedCheck parsed = parse_check(object);
  if (parsed.error) return refuse(400, *parsed.error);
  auto finish = [](Outcome& outcome) {
    if (outcome.error) return refuse(400, *outcome.error);
    Reply reply = json_reply(200, decision_json(outcome.result));
    add_headers(reply, outcome.result);
    return reply;
  };
  Outcome outcome = decide(engine, parsed.input, now);
  if (!outcome.error && outcome.result.remote) {
    return after_redis(engine, redis, std::move(outcome), finish);
  }
  return finish(outcome);
}

Reply get_check(engine::Engine& engine, backend::redis::Store* redis, std::string rule,
                std::string_view query, core::Nanos now) {
  const ParsedCheck parsed = parse_check_query(std::move(rule), query);
  if (parsed.error) return refuse(400, *parsed.error);
  auto finish = [](Outcome& outcome) {
    if (outcome.error) return refuse(outcome.error->field == "rule" ? 404 : 400, *outcome.error);
    engine::CheckResult& r = outcome.result;
    const bool allowed = r.decision.allowed || r.dry_run;
    Reply reply = allowed ? text_reply(204, {}, {}) : json_reply(429, decision_json(r));
    if (allowed) reply.delay = std::chrono::nanoseconds(r.decision.delay);
    add_headers(reply, r);
    return reply;
  };
  Outcome outcome = decide(engine, parsed.input, now);
  if (!outcome.error && outcome.result.remote) {
    return after_redis(engine, redis, std::move(outcome), finish);
  }
  return finish(outcome);
}

}  // namespace sluice::server
