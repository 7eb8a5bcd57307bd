// One key's override of a rule's limit on the admin listener (docs/admin-api.md, "Overrides"):
// GET, PUT and DELETE /v1/rules/{name}/overrides/{key}. A local rule's is a change of its
// `overrides`, validated and written back as a PUT of the rule is; a Redis rule's is kept in
// Redis for every instance (shared_override_sync.hpp), never written to the file.
#include <algorithm>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <optional>

#include "admin_request.hpp"
#include "admin_service.hpp"
#include "shared_override_sync.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/config/shared_overrides.hpp"
#include "sluice/control/config_store.hpp"
#include "sluice/core/utf8.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

json::object override_json(const std::string& rule, const config::LimitVariant& v, bool shared) {
  return json::object{{"rule", rule}, {"key", v.name}, {"limit", v.limit_text}, {"shared", shared}};
}

// An override by its key, or a rule by its name.
template <typename List>
auto find_named(List& list, const std::string& name) {
  return std::find_if(list.begin(), list.end(), [&](const auto& v) { return v.name == name; });
}

const config::LimitVariant* found(const std::vector<config::LimitVariant>& list,
                                  const std::string& key) {
  auto it = find_named(list, key);
  return it == list.end() ? nullptr : &*it;
}

Reply no_override(const AdminRequest& request) {
  return error_reply(404, "rule '" + request.name + "' has no override for this key", "key");
}

// What Redis answered a shared override's write, when it was not written.
Reply not_written(engine::SharedWrite result) {
  switch (result) {
    case engine::SharedWrite::kNoRedis:
      return error_reply(503, "Redis is not configured: nothing changed", "redis");
    case engine::SharedWrite::kFull:
      return error_reply(409,
                         "Redis holds " + std::to_string(engine::kMaxSharedOverrides) +
                             " shared overrides, the most kept: delete one first (nothing "
                             "changed)",
                         "key");
    default:
      return error_reply(503, "Redis did not take the change: nothing changed; retry", "redis");
  }
}

std::optional<Reply> bad_request(const AdminRequest& request) {
  if (auto problem = config::entry_name_problem("rule", request.name)) {
    return invalid_reply({*problem}, "name");
  }
  if (request.key.empty()) return error_reply(400, "missing key", "key");
  if (core::invalid_utf8_at(request.key)) {
    return error_reply(400, "the key is not valid UTF-8", "key");
  }
  return std::nullopt;
}

// The body's limit spec: {"limit": "gcra:rate=100/s,burst=50"}.
std::optional<config::LimitVariant> read_body(const AdminRequest& request, std::string& error) {
  boost::system::error_code ec;
  const json::value doc = json::parse(request.body, ec);
  if (ec || !doc.is_object() || doc.get_object().size() != 1 ||
      !doc.get_object().contains("limit") || !doc.get_object().at("limit").is_string()) {
    error =
        "the body must be {\"limit\": LIMIT}, the key's limit (e.g. {\"limit\": "
        "\"gcra:rate=100/s,burst=50\"})";
    return std::nullopt;
  }
  const std::string text(doc.get_object().at("limit").get_string());
  auto spec = spec::parse_limit_spec(text);
  if (!spec) {
    error = "field 'limit': " + spec.error();
    return std::nullopt;
  }
  return config::LimitVariant{request.key, text, *spec, 0};
}

}  // namespace

Reply AdminService::get_override(const AdminRequest& request) {
  if (auto bad = bad_request(request)) return *bad;
  const auto in_force = store_->rules();
  const config::Rule* rule = in_force->rule(request.name);
  if (rule == nullptr) return error_reply(404, "no rule named '" + request.name + "'", "name");
  if (const auto* v = found(rule->shared_overrides, request.key)) {
    return json_reply(200, override_json(rule->name, *v, true));
  }
  if (const auto* v = found(rule->overrides, request.key)) {
    return json_reply(200, override_json(rule->name, *v, false));
  }
  return no_override(request);
}

Reply AdminService::put_override(const AdminRequest& request) {
  return on_config_worker(
      [request](AdminService& self) { return self.counted(self.change_override(request, true)); });
}

Reply AdminService::delete_override(const AdminRequest& request) {
  return on_config_worker(
      [request](AdminService& self) { return self.counted(self.change_override(request, false)); });
}

Reply AdminService::change_override(const AdminRequest& request, bool put) {
  if (auto bad = bad_request(request)) return *bad;
  std::optional<config::LimitVariant> given;
  if (put) {
    std::string error;
    given = read_body(request, error);
    if (!given) return error_reply(400, error, "limit");
  }
  const auto in_force = store_->rules();
  if (const config::Rule* rule = in_force->rule(request.name);
      rule != nullptr && in_force->storage_of(*rule) == config::Storage::kRedis) {
    return change_shared_override(*in_force, *rule, request, given);
  }
  std::optional<Reply> refused;
  std::optional<config::LimitVariant> before;
  const ChangeOutcome outcome = store_->change([&](config::RuleSet& set) {
    auto rule = std::find_if(set.rules.begin(), set.rules.end(),
                             [&](const config::Rule& r) { return r.name == request.name; });
    if (rule == set.rules.end()) {
      refused = error_reply(404, "no rule named '" + request.name + "'", "name");
      return false;
    }
    auto it = find_named(rule->overrides, request.key);
    if (it != rule->overrides.end()) before = *it;
    if (!put) {
      if (!before) {
        refused = no_override(request);
        return false;
      }
      rule->overrides.erase(it);
    } else if (before) {
      *it = *given;
    } else {
      rule->overrides.push_back(*given);
    }
    return true;
  });
  if (refused) return *refused;
  if (outcome.kind != ChangeOutcome::Kind::kApplied &&
      outcome.kind != ChangeOutcome::Kind::kUnchanged) {
    return change_failed(outcome);
  }
  const config::LimitVariant& shown = put ? *given : *before;
  return json_reply(put && !before ? 201 : 200, override_json(request.name, shown, false));
}

Reply AdminService::change_shared_override(const config::RuleSet& rules, const config::Rule& rule,
                                           const AdminRequest& request,
                                           const std::optional<config::LimitVariant>& given) {
  const config::LimitVariant* was = found(rule.shared_overrides, request.key);
  std::optional<config::LimitVariant> before;
  if (was != nullptr) before = *was;
  if (!given && !before) {
    if (found(rule.overrides, request.key) == nullptr) return no_override(request);
    return error_reply(409,
                       "the override of this key is in the config file: change it there (the "
                       "API's overrides of a rule kept in Redis are kept in Redis)",
                       "key");
  }
  if (given) {
    // Checked as the whole rule set would be with it, before Redis holds it for everyone.
    config::RuleSet next = rules;
    auto& list = find_named(next.rules, rule.name)->shared_overrides;
    std::erase_if(list, [&](const config::LimitVariant& v) { return v.name == request.key; });
    list.push_back(*given);
    control::ChangeOutcome checked;
    checked.errors = config::validate(next, store_->file_name());
    if (!checked.errors.empty()) {
      checked.kind = control::ChangeOutcome::Kind::kInvalid;
      return change_failed(checked);
    }
  }
  if (!shared_) return not_written(engine::SharedWrite::kNoRedis);
  Reply reply;
  reply.later = [sync = shared_, name = rule.name, key = request.key, given,
                 before](std::function<void(Reply)> done) {
    std::optional<std::string> limit;
    if (given) limit = given->limit_text;
    sync->write(name, key, limit,
                [name, given, before, done = std::move(done)](engine::SharedWrite result,
                                                              const control::ChangeOutcome& o) {
                  if (result != engine::SharedWrite::kDone) return done(not_written(result));
                  if (o.kind != control::ChangeOutcome::Kind::kApplied &&
                      o.kind != control::ChangeOutcome::Kind::kUnchanged) {
                    return done(change_failed(o));
                  }
                  const config::LimitVariant& shown = given ? *given : *before;
                  done(json_reply(given && !before ? 201 : 200, override_json(name, shown, true)));
                });
  };
  return reply;
}

}  // namespace sluice::server
