// Reply builders (admin_reply.hpp).
#include "admin_reply.hpp"

#include <boost/json/serialize.hpp>

#include "sluice/control/config_store.hpp"
#include "sluice/core/utf8.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

// The field a loader message names ("rule 'a': field 'limit': ..."), or `fallback`.
std::string field_of(std::string_view message, std::string_view fallback = "body") {
  constexpr std::string_view kField = "field '";
  const auto at = message.find(kField);
  if (at == std::string_view::npos) return std::string(fallback);
  const auto start = at + kField.size();
  const auto end = message.find('\'', start);
  if (end == std::string_view::npos) return std::string(fallback);
  return std::string(message.substr(start, end - start));
}

std::vector<std::string> messages(const std::vector<config::ConfigError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.message);
  return out;
}

bool all_text(const json::value& v) {
  if (v.is_string()) return !core::invalid_utf8_at(v.get_string());
  if (v.is_array()) {
    for (const auto& item : v.get_array()) {
      if (!all_text(item)) return false;
    }
  }
  if (v.is_object()) {
    for (const auto& [key, item] : v.get_object()) {
      if (core::invalid_utf8_at(key) || !all_text(item)) return false;
    }
  }
  return true;
}

// Boost.JSON writes a string's bytes as they are, so a message that quotes client input would
// make the reply invalid JSON; such strings go out with \xHH escapes instead.
json::value as_text(const json::value& v) {
  if (v.is_string()) return json::string(core::printable(v.get_string()));
  if (v.is_array()) {
    json::array out;
    for (const auto& item : v.get_array()) out.push_back(as_text(item));
    return out;
  }
  if (v.is_object()) {
    json::object out;
    for (const auto& [key, item] : v.get_object()) out[core::printable(key)] = as_text(item);
    return out;
  }
  return v;
}

}  // namespace

Reply json_reply(unsigned status, const json::value& body) {
  Reply reply;
  reply.status = status;
  reply.body = all_text(body) ? json::serialize(body) : json::serialize(as_text(body));
  reply.body += '\n';
  return reply;
}

Reply error_reply(unsigned status, std::string_view error, std::string_view field) {
  json::object body;
  body["error"] = error;
  if (!field.empty()) body["field"] = field;
  return json_reply(status, body);
}

Reply text_reply(unsigned status, std::string body, std::string content_type) {
  Reply reply;
  reply.status = status;
  reply.content_type = std::move(content_type);
  reply.body = std::move(body);
  return reply;
}

Reply invalid_reply(const std::vector<std::string>& problems, std::string_view field) {
  json::object body;
  body["error"] = problems.front();
  body["field"] = field.empty() ? field_of(problems.front()) : std::string(field);
  json::array all;
  for (const auto& p : problems) all.emplace_back(p);
  body["errors"] = std::move(all);
  return json_reply(400, body);
}

Reply change_failed(const ChangeOutcome& outcome) {
  switch (outcome.kind) {
    case ChangeOutcome::Kind::kInvalid:
      return invalid_reply(messages(outcome.errors));
    case ChangeOutcome::Kind::kFileChanged:
      return error_reply(409, outcome.problem);
    case ChangeOutcome::Kind::kWriteFailed:
      return error_reply(500, outcome.problem);
    default:
      return error_reply(500, "the change was not applied");
  }
}

}  // namespace sluice::server
