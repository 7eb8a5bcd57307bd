// Reply builders (admin_reply.hpp).
#include "admin_reply.hpp"

#include <boost/json/serialize.hpp>

namespace sluice::server {

Reply json_reply(unsigned status, const boost::json::value& body) {
  Reply reply;
  reply.status = status;
  reply.body = boost::json::serialize(body);
  reply.body += '\n';
  return reply;
}

Reply error_reply(unsigned status, std::string_view error, std::string_view field) {
  boost::json::object body;
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
