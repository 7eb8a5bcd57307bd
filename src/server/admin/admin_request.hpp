// One admin API request as the handlers see it: method, path, query, body and what the listener
// checks (Host, Authorization), decoded from HTTP by AdminSession and matched by the router.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "admin_access.hpp"

namespace sluice::server {

struct AdminRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string_view path;   // the target before '?'
  std::string_view query;  // after '?', may be empty
  std::string_view body;
  std::string name;  // the {name} segment of the matched pattern, percent-decoded
  std::string key;   // the {key} segment, percent-decoded
  const ListenerInfo* listener = nullptr;  // the listener it came in on
  unsigned version = 11;                   // HTTP/1.x: 10 or 11
  std::optional<std::string_view> host;    // the (first) Host field, when sent
  bool repeated_host = false;              // more than one Host field
  std::string_view authorization;          // the Authorization field, "" when not sent
};

}  // namespace sluice::server
