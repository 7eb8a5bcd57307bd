// The RLS domain endpoints and POST /v1/reload (rls_handlers.hpp).
#include "rls_handlers.hpp"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "sluice/config/loader.hpp"
#include "sluice/config/rls.hpp"
#include "sluice/control/config_store.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;
using config::RlsDescriptor;
using config::RlsDomain;

// envoyproxy/ratelimit's own field names, so that the document reads back through PUT.
json::object descriptor_json(const RlsDescriptor& d) {
  json::object out;
  out["key"] = d.key;
  if (!d.value.empty()) out["value"] = d.value;
  if (d.rate_limit) {
    const config::RlsRateLimit& limit = *d.rate_limit;
    json::object rate;
    if (limit.unlimited) {
      rate["unlimited"] = true;
    } else {
      rate["unit"] = std::string(config::unit_name(limit.unit));
      rate["requests_per_unit"] = limit.requests_per_unit;
    }
    if (!limit.name.empty()) rate["name"] = limit.name;
    if (!limit.algorithm.empty()) rate["algorithm"] = limit.algorithm;
    out["rate_limit"] = std::move(rate);
  }
  if (d.shadow_mode) out["shadow_mode"] = true;
  if (!d.descriptors.empty()) {
    json::array children;
    for (const auto& child : d.descriptors) children.push_back(descriptor_json(child));
    out["descriptors"] = std::move(children);
  }
  return out;
}

json::object domain_json(const RlsDomain& domain) {
  json::object out;
  out["domain"] = domain.name;
  json::array descriptors;
  for (const auto& d : domain.descriptors) descriptors.push_back(descriptor_json(d));
  out["descriptors"] = std::move(descriptors);
  return out;
}

const RlsDomain* find_domain(const config::RuleSet& rules, const std::string& name) {
  if (!rules.rls) return nullptr;
  for (const auto& d : rules.rls->domains) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

Reply not_found(const std::string& name) {
  return error_reply(404, "no RLS domain named '" + name + "'", "domain");
}

// 409 for a domain an envoyproxy/ratelimit file holds: the file is where it changes.
Reply held_by_file(const RlsDomain& domain) {
  return error_reply(409,
                     "RLS domain '" + domain.name + "' is read from " + domain.file +
                         "; change it there, then reload (POST /v1/reload or SIGHUP)",
                     "domain");
}

std::optional<Reply> bad_name(const std::string& name) {
  auto problem = config::entry_name_problem("domain", name);
  if (!problem) return std::nullopt;
  return invalid_reply({*problem}, "domain");
}

// The body as one domain named `name`: the reader's errors ("body:LINE: ..."), or a document
// that holds another domain or several.
core::Expected<RlsDomain> read_body(const std::string& name, std::string_view body) {
  if (body.empty()) {
    return core::make_error("the body must be an envoyproxy/ratelimit domain (YAML or JSON)");
  }
  config::RlsLoaded loaded = config::load_rls_text(body, "body");
  if (!loaded.errors.empty()) {
    std::string joined;
    for (const auto& e : loaded.errors) joined += (joined.empty() ? "" : "\n") + e.format();
    return core::make_error(std::move(joined));
  }
  if (loaded.domains.size() != 1) {
    return core::make_error("the body must hold one domain, not " +
                            std::to_string(loaded.domains.size()));
  }
  RlsDomain domain = std::move(loaded.domains.front());
  if (domain.name != name) {
    return core::make_error("the body names domain '" + domain.name + "' but the path names '" +
                            name + "'");
  }
  domain.file.clear();  // the config's own: written back with it
  return domain;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (auto at = text.find('\n'); at != std::string::npos; at = text.find('\n', start)) {
    out.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(text.substr(start));
  return out;
}

}  // namespace

Reply list_rls_domains(const ConfigStore& store) {
  const auto rules = store.rules();
  json::array domains;
  if (rules->rls) {
    for (const auto& d : rules->rls->domains) {
      json::object row = domain_json(d);
      row["file"] = d.file;  // "" for the config's own
      domains.push_back(std::move(row));
    }
  }
  return json_reply(200, domains);
}

Reply get_rls_domain(const ConfigStore& store, const std::string& name) {
  if (auto refused = bad_name(name)) return *refused;
  const auto rules = store.rules();
  const RlsDomain* domain = find_domain(*rules, name);
  if (domain == nullptr) return not_found(name);
  return json_reply(200, domain_json(*domain));
}

Reply put_rls_domain(ConfigStore& store, const std::string& name, std::string_view body) {
  if (auto refused = bad_name(name)) return *refused;
  auto parsed = read_body(name, body);
  if (!parsed) return invalid_reply(lines_of(parsed.error()));
  std::optional<Reply> refused;
  bool created = false;
  const ChangeOutcome outcome = store.change([&](config::RuleSet& rules) {
    if (!rules.rls) rules.rls.emplace();
    auto& domains = rules.rls->domains;
    auto it = std::find_if(domains.begin(), domains.end(),
                           [&](const RlsDomain& d) { return d.name == name; });
    if (it != domains.end() && !it->file.empty()) {
      refused = held_by_file(*it);
      return false;
    }
    created = it == domains.end();
    if (created) {
      domains.push_back(*parsed);
    } else {
      *it = *parsed;
    }
    return true;
  });
  if (refused) return *refused;
  if (outcome.kind != ChangeOutcome::Kind::kApplied) return change_failed(outcome);
  return json_reply(created ? 201 : 200, domain_json(*parsed));
}

Reply delete_rls_domain(ConfigStore& store, const std::string& name) {
  if (auto refused = bad_name(name)) return *refused;
  std::optional<Reply> refused;
  std::optional<RlsDomain> removed;
  const ChangeOutcome outcome = store.change([&](config::RuleSet& rules) {
    if (!rules.rls) {
      refused = not_found(name);
      return false;
    }
    auto& domains = rules.rls->domains;
    auto it = std::find_if(domains.begin(), domains.end(),
                           [&](const RlsDomain& d) { return d.name == name; });
    if (it == domains.end()) {
      refused = not_found(name);
    } else if (!it->file.empty()) {
      refused = held_by_file(*it);
    } else {
      removed = std::move(*it);
      domains.erase(it);
    }
    return !refused;
  });
  if (refused) return *refused;
  if (outcome.kind != ChangeOutcome::Kind::kApplied) return change_failed(outcome);
  return json_reply(200, domain_json(*removed));
}

Reply reload_files(ConfigStore& store) {
  if (!store.has_files()) {
    return error_reply(409,
                       "nothing to reload: sluice serve was started without --config or "
                       "--rls-config");
  }
  const std::vector<std::string> errors = store.reload();
  const auto version = store.engine().version();
  if (!errors.empty()) {
    // The version still in force: the refused files changed nothing.
    json::object body = {{"error", errors.front()}, {"version", version}};
    json::array all;
    for (const auto& e : errors) all.emplace_back(e);
    body["errors"] = std::move(all);
    return json_reply(422, body);
  }
  return json_reply(200, json::object{{"reloaded", true}, {"version", version}});
}

}  // namespace sluice::server
