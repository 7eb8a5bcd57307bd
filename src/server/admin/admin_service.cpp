// The admin endpoints (admin_service.hpp).
#include "admin_service.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

#include "admin_access.hpp"
#include "admin_request.hpp"
#include "block_handlers.hpp"
#include "build_info_metric.hpp"
#include "check_handlers.hpp"
#include "instance_beacon.hpp"
#include "key_handlers.hpp"
#include "process_metrics.hpp"
#include "rls_handlers.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/config/rule_json.hpp"
#include "sluice/config/shared_overrides.hpp"
#include "sluice/control/config_store.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/proto/http/field_values.hpp"
#include "sluice/proto/http/request_target.hpp"
#include "stats_sampler.hpp"
#include "top_handlers.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

// A rule name from the path that no rule could have: 400 naming `name`, with `errors` as a
// refused PUT has it.
std::optional<Reply> bad_name(const std::string& name) {
  auto problem = config::entry_name_problem("rule", name);
  if (!problem) return std::nullopt;
  return invalid_reply({*problem}, "name");
}

using metrics::Family;
using metrics::Kind;

constexpr Family kReloads{"sluice_config_reloads_total", Kind::kCounter,
                          "Config file reloads (SIGHUP or file change), by result."};
constexpr Family kVersion{"sluice_config_version", Kind::kGauge,
                          "Version of the rule set in force; every reload or API change adds one."};
constexpr Family kChanges{"sluice_admin_rule_changes_total", Kind::kCounter,
                          "Rule changes through the admin API (PUT, DELETE), by result."};
constexpr Family kReplies{"sluice_admin_requests_total", Kind::kCounter,
                          "Admin API replies, by HTTP status code."};

}  // namespace

AdminService::AdminService(std::shared_ptr<control::ConfigStore> store,
                           std::shared_ptr<const AccessKeeper> access, metrics::Registry& registry,
                           boost::asio::any_io_executor config_work)
    : store_(std::move(store)),
      access_(std::move(access)),
      registry_(registry),
      config_work_(std::move(config_work)) {
  metrics_ = registry_.add([this](metrics::Sink& sink) { collect(sink); });
}

void AdminService::collect(metrics::Sink& sink) const {
  collect_build_info(sink);
  collect_process_metrics(sink);
  sink.add(kReloads, {{"result", "ok"}}, static_cast<double>(store_->reloads_ok()));
  sink.add(kReloads, {{"result", "error"}}, static_cast<double>(store_->reloads_error()));
  sink.add(kVersion, {}, static_cast<double>(store_->engine().version()));
  sink.add(kChanges, {{"result", "ok"}},
           static_cast<double>(changes_ok_.load(std::memory_order_relaxed)));
  sink.add(kChanges, {{"result", "error"}},
           static_cast<double>(changes_error_.load(std::memory_order_relaxed)));
  sink.declare(kReplies);
  for (std::size_t code = 100; code < replies_.size(); ++code) {
    const auto n = replies_[code].load(std::memory_order_relaxed);
    if (n != 0) sink.add(kReplies, {{"code", std::to_string(code)}}, static_cast<double>(n));
  }
}

Reply AdminService::on_config_worker(std::function<Reply(AdminService&)> work) {
  Reply reply;
  reply.later = [self = shared_from_this(),
                 work = std::move(work)](std::function<void(Reply)> done) {
    boost::asio::post(self->config_work_, [self, work, done = std::move(done)] {
      Reply answer;
      try {
        answer = work(*self);
      } catch (const std::exception& e) {
        answer = error_reply(500, std::string("internal error: ") + e.what());
      }
      done(std::move(answer));
    });
  };
  return reply;
}

std::shared_ptr<const AdminAccess> AdminService::access() const { return access_->access(); }

void AdminService::count_reply(unsigned status) {
  if (status < replies_.size()) replies_[status].fetch_add(1, std::memory_order_relaxed);
}

Reply AdminService::healthz(const AdminRequest&) { return text_reply(200, "ok\n"); }

Reply AdminService::metrics(const AdminRequest&) {
  return text_reply(200, registry_.text(), "text/plain; version=0.0.4; charset=utf-8");
}

Reply AdminService::list_rules(const AdminRequest&) {
  const auto in_force = store_->rules();
  json::array rules;
  for (const auto& rule : in_force->rules) rules.push_back(config::rule_json(rule));
  return json_reply(200, rules);
}

Reply AdminService::get_rule(const AdminRequest& request) {
  if (auto refused = bad_name(request.name)) return *refused;
  const auto in_force = store_->rules();
  const config::Rule* rule = in_force->rule(request.name);
  if (rule == nullptr) return error_reply(404, "no rule named '" + request.name + "'", "name");
  return json_reply(200, config::rule_json(*rule));
}

// A copy of the request goes to the worker; its views (path, query, body) point into the
// session's parser, which lives until the reply is written.
Reply AdminService::put_rule(const AdminRequest& request) {
  return on_config_worker(
      [request](AdminService& self) { return self.counted(self.put(request)); });
}

Reply AdminService::delete_rule(const AdminRequest& request) {
  return on_config_worker(
      [request](AdminService& self) { return self.counted(self.erase(request)); });
}

Reply AdminService::counted(Reply reply) {
  if (reply.later) {
    reply.later = [self = shared_from_this(),
                   later = std::move(reply.later)](std::function<void(Reply)> done) {
      later([self, done = std::move(done)](Reply r) { done(self->counted(std::move(r))); });
    };
    return reply;
  }
  (reply.status < 300 ? changes_ok_ : changes_error_).fetch_add(1, std::memory_order_relaxed);
  return reply;
}

Reply AdminService::put(const AdminRequest& request) {
  if (auto refused = bad_name(request.name)) return *refused;
  if (request.body.empty()) {
    return invalid_reply({"the body must be a rule (JSON or YAML)"}, "body");
  }
  auto parsed = config::parse_rule(request.name, request.body);
  if (!parsed) return invalid_reply(parsed.problems);
  config::Rule rule = std::move(*parsed.rule);
  if (rule.name != request.name) {
    return error_reply(
        400, "the body names rule '" + rule.name + "' but the path names '" + request.name + "'",
        "name");
  }

  bool created = false;
  std::optional<config::Rule> before;
  const ChangeOutcome outcome = store_->change([&](config::RuleSet& set) {
    auto it = std::find_if(set.rules.begin(), set.rules.end(),
                           [&](const config::Rule& r) { return r.name == rule.name; });
    created = it == set.rules.end();
    if (created) {
      set.rules.push_back(rule);
    } else {
      before = *it;
      config::Rule replacing = rule;
      config::keep_shared_overrides(set, *it, replacing);  // Redis's, not the rule text's
      *it = std::move(replacing);
    }
    return true;
  });
  if (outcome.kind != ChangeOutcome::Kind::kApplied) return change_failed(outcome);
  const auto in_force = store_->rules();
  const config::Rule* now = in_force->rule(request.name);
  remember_change(request.name, before, now != nullptr ? *now : rule);
  return json_reply(created ? 201 : 200, config::rule_json(now != nullptr ? *now : rule));
}

Reply AdminService::erase(const AdminRequest& request) {
  if (auto bad = bad_name(request.name)) return *bad;
  std::optional<Reply> refused;
  std::optional<config::Rule> deleted;
  const ChangeOutcome outcome = store_->change([&](config::RuleSet& set) {
    auto it = std::find_if(set.rules.begin(), set.rules.end(),
                           [&](const config::Rule& r) { return r.name == request.name; });
    if (it == set.rules.end()) {
      refused = error_reply(404, "no rule named '" + request.name + "'", "name");
      return false;
    }
    json::array users;
    std::string list;
    for (const auto& route : set.routes) {
      if (std::find(route.rules.begin(), route.rules.end(), request.name) == route.rules.end()) {
        continue;
      }
      users.emplace_back(route.name);
      list += (list.empty() ? "'" : ", '") + route.name + "'";
    }
    if (!users.empty()) {
      json::object body;
      body["error"] = "rule '" + request.name + "' is used by route" +
                      (users.size() == 1 ? " " : "s ") + list +
                      "; remove it from their `rules` first";
      body["field"] = "name";
      body["routes"] = std::move(users);
      refused = json_reply(409, body);
      return false;
    }
    deleted = *it;
    set.rules.erase(it);
    return true;
  });
  if (refused) return *refused;
  if (outcome.kind != ChangeOutcome::Kind::kApplied) return change_failed(outcome);
  remember_change(request.name, deleted, std::nullopt);
  return json_reply(200, config::rule_json(*deleted));
}

Reply AdminService::validate(const AdminRequest& request) {
  return on_config_worker([request](AdminService& self) { return self.check_body(request); });
}

Reply AdminService::check_body(const AdminRequest& request) {
  if (request.body.empty()) {
    return invalid_reply({"the body must be a config or a rule (YAML or JSON)"}, "body");
  }
  json::object result;
  json::array errors;
  if (auto name = config::rule_body_name(request.body)) {
    // One rule: checked as PUT /v1/rules/{name} would check it, against the rules in force.
    if (name->empty()) {
      name = proto::http::form_decode(proto::http::query_param(request.query, "name").value_or(""));
    }
    if (name->empty()) name = "unnamed";
    result["kind"] = "rule";
    auto parsed = config::parse_rule(*name, request.body);
    if (!parsed) {
      for (auto& p : parsed.problems) errors.emplace_back(p);
    } else {
      config::RuleSet set = *store_->rules();
      auto it = std::find_if(set.rules.begin(), set.rules.end(),
                             [&](const config::Rule& r) { return r.name == *name; });
      if (it == set.rules.end()) {
        set.rules.push_back(*parsed.rule);
      } else {
        *it = *parsed.rule;
      }
      for (const auto& e : config::validate(set, "body")) errors.emplace_back(e.message);
    }
  } else {
    // A whole config: checked as `sluice check-config` checks a file ("body:LINE: problem").
    result["kind"] = "config";
    for (const auto& e : config::load_config_text(request.body, "body").errors) {
      errors.emplace_back(e.format());
    }
  }
  result["valid"] = errors.empty();
  result["errors"] = std::move(errors);
  return json_reply(200, result);
}

Reply AdminService::check(const AdminRequest& request) {
  return post_check(*loop_, request.body, clock_->now());
}

Reply AdminService::check_rule(const AdminRequest& request) {
  return get_check(*loop_, request.name, request.query, clock_->now());
}

Reply AdminService::release(const AdminRequest& request) {
  return post_release(*loop_, request.body);
}

Reply AdminService::report(const AdminRequest& request) {
  return post_report(*loop_, request.body, clock_->now());
}

Reply AdminService::release_lease(const AdminRequest& request) {
  return delete_lease(*loop_, request.name);
}

Reply AdminService::top_keys(const AdminRequest& request) {
  return server::top_keys(store_->engine(), request.name, request.query, clock_->now());
}

Reply AdminService::get_key(const AdminRequest& request) {
  return key_state(*loop_, request.name, request.key, engine::KeyOp::kPeek, clock_->now());
}

Reply AdminService::reset_key(const AdminRequest& request) {
  return key_state(*loop_, request.name, request.key, engine::KeyOp::kReset, clock_->now());
}

Reply AdminService::list_blocks(const AdminRequest& request) {
  return server::list_blocks(*loop_, request.name, request.query, clock_->now());
}

Reply AdminService::get_block(const AdminRequest& request) {
  return key_state(*loop_, request.name, request.key, engine::KeyOp::kBlock, clock_->now());
}

Reply AdminService::unblock(const AdminRequest& request) {
  return key_state(*loop_, request.name, request.key, engine::KeyOp::kUnblock, clock_->now());
}

// Changes and reloads run on the config worker, as PUT /v1/rules does, and count as changes.
Reply AdminService::list_rls(const AdminRequest&) { return list_rls_domains(*store_); }

Reply AdminService::get_rls(const AdminRequest& request) {
  return get_rls_domain(*store_, request.name);
}

Reply AdminService::put_rls(const AdminRequest& request) {
  return on_config_worker([request](AdminService& self) {
    return self.counted(put_rls_domain(*self.store_, request.name, request.body));
  });
}

Reply AdminService::delete_rls(const AdminRequest& request) {
  return on_config_worker([request](AdminService& self) {
    return self.counted(delete_rls_domain(*self.store_, request.name));
  });
}

Reply AdminService::reload(const AdminRequest&) {
  return on_config_worker([](AdminService& self) { return reload_files(*self.store_); });
}

void AdminService::remember_change(const std::string& rule,
                                   const std::optional<config::Rule>& before,
                                   const std::optional<config::Rule>& after) {
  const std::int64_t at = wall_ != nullptr ? wall_->now() / core::kNanosPerSecond : 0;
  last_change_.record(rule, before, after, at);
}

Reply AdminService::ui(const AdminRequest& request) {
  if (sampler_) sampler_->start_once();  // the page is open: its rates are kept from now on
  if (request.path == "/ui") {
    Reply moved = text_reply(308, "the dashboard is at /ui/\n");
    moved.headers.emplace_back("Location", "/ui/");
    return moved;
  }
  return ui_file(request.key);
}

Reply AdminService::series(const AdminRequest& request) {
  if (!sampler_) return error_reply(503, "the live rates are not being sampled");
  sampler_->start_once();
  return stats_series(*sampler_, request.query);
}

Reply AdminService::status(const AdminRequest&) {
  return server::status(*store_, registry_, sampler_.get());
}

Reply AdminService::last_change(const AdminRequest&) { return last_change_.reply(); }

Reply AdminService::instances(const AdminRequest&) {
  if (!beacon_) return error_reply(503, "this listener keeps no heartbeat");
  return beacon_->list();
}

}  // namespace sluice::server
