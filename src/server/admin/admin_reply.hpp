// What an admin handler answers: status, content type, body and extra header fields. Every
// error is a JSON object {"error": "...", "field": "..."} so that scripts can read it.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::server {

struct Reply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Hold the reply this long before writing it (a delay rule's wait, GET /v1/check/{rule}).
  std::chrono::nanoseconds delay{0};
  // Set when the answer needs I/O first (a rule kept in Redis): the session calls it on its
  // loop and writes the Reply it is given instead of this one.
  std::function<void(std::function<void(Reply)>)> later;
};

// Strings that are not UTF-8 (client input quoted in a message) go out with \xHH escapes, so
// the reply is always valid JSON.
Reply json_reply(unsigned status, const boost::json::value& body);

// `field` names the offending input ("limit", "key", "body", "name"); omitted when empty.
Reply error_reply(unsigned status, std::string_view error, std::string_view field = {});

// 400 for refused input: every problem in `errors`, the first as `error`, and as `field` the
// one that problem names ("rule 'a': field 'limit': ..." -> "limit") unless `field` says.
Reply invalid_reply(const std::vector<std::string>& problems, std::string_view field = {});

}  // namespace sluice::server
namespace sluice::control {
struct ChangeOutcome;
}  // namespace sluice::control
namespace sluice::server {
using control::ChangeOutcome;
// A change through the ConfigStore that was not applied: 400 with its errors, 409 for a file
// changed on disk, 500 for a failed write-back.
Reply change_failed(const ChangeOutcome& outcome);

// An empty `content_type` sends no Content-Type (a 204).
Reply text_reply(unsigned status, std::string body,
                 std::string content_type = "text/plain; charset=utf-8");

}  // namespace sluice::server
