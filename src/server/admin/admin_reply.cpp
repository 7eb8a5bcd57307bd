// Reply builders (admin_reply.hpp).
#include "admin_reply.hpp"

#include <boost/json/serialize.hpp>

#include "sluice/core/utf8.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

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

}  // namespace sluice::server
