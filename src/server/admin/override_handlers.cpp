// One key's override of a rule's limit on the admin listener (docs/admin-api.md, "Overrides"):
// GET, PUT and DELETE /v1/rules/{name}/overrides/{key}, each a change of the rule's
// `overrides` through the config store, validated and written back as a PUT of the rule is.
#include <algorithm>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <optional>

#include "admin_request.hpp"
#include "admin_service.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/control/config_store.hpp"
#include "sluice/core/utf8.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

json::object override_json(const std::string& rule, const config::LimitVariant& v) {
  return json::object{{"rule", rule}, {"key", v.name}, {"limit", v.limit_text}};
}

std::vector<config::LimitVariant>::iterator find_override(config::Rule& rule,
                                                          const std::string& key) {
  return std::find_if(rule.overrides.begin(), rule.overrides.end(),
                      [&](const config::LimitVariant& v) { return v.name == key; });
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

// Overrides made here would reach this instance alone; a Redis rule is shared by every one.
std::optional<Reply> shared_rule(const config::RuleSet& set, const config::Rule& rule) {
  if (set.storage_of(rule) != config::Storage::kRedis) return std::nullopt;
  return error_reply(409,
                     "rule '" + rule.name +
                         "' is kept in Redis: set its overrides in the config of every instance "
                         "(a change here would reach this instance only)",
                     "name");
}

}  // namespace

Reply AdminService::get_override(const AdminRequest& request) {
  if (auto bad = bad_request(request)) return *bad;
  const auto in_force = store_->rules();
  const config::Rule* rule = in_force->rule(request.name);
  if (rule == nullptr) return error_reply(404, "no rule named '" + request.name + "'", "name");
  for (const config::LimitVariant& v : rule->overrides) {
    if (v.name == request.key) return json_reply(200, override_json(rule->name, v));
  }
  return error_reply(404, "rule '" + request.name + "' has no override for this key", "key");
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
  std::optional<Reply> refused;
  std::optional<config::LimitVariant> before;
  const ChangeOutcome outcome = store_->change([&](config::RuleSet& set) {
    auto rule = std::find_if(set.rules.begin(), set.rules.end(),
                             [&](const config::Rule& r) { return r.name == request.name; });
    if (rule == set.rules.end()) {
      refused = error_reply(404, "no rule named '" + request.name + "'", "name");
      return false;
    }
    if ((refused = shared_rule(set, *rule))) return false;
    auto it = find_override(*rule, request.key);
    if (it != rule->overrides.end()) before = *it;
    if (!put) {
      if (!before) {
        refused =
            error_reply(404, "rule '" + request.name + "' has no override for this key", "key");
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
  return json_reply(put && !before ? 201 : 200, override_json(request.name, shown));
}

}  // namespace sluice::server
