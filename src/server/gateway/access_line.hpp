// One access-log line made from the fields of one exchange, as text columns or as a JSON object:
// a pure function, so unit tests check each column and each escape without a gateway.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/config/rule_set.hpp"

namespace sluice::server::gateway {

// What one line says, in the order of the text columns (docs/logging.md defines each). An
// empty text is written "-" in text and null in JSON.
struct AccessFields {
  std::int64_t time_ms = 0;     // wall clock, ms since the epoch
  std::string_view client;      // the client address (after trusted_proxies)
  std::string_view request_id;  // X-Request-Id, the client's or a generated one
  std::string_view method;
  std::string_view target;  // the request target as the client sent it
  int status = 0;
  std::uint64_t bytes = 0;    // response body bytes sent to the client
  std::string_view route;     // the route's name; "" when none matched
  std::string_view outcome;   // forward, delay, respond, reject, missing-key, noroute, error
  std::string_view rule;      // the rule that decided (see docs/logging.md)
  std::string_view key;       // that rule's key: raw, or hashed (log_key: hash)
  double delay_ms = 0;        // how long the request was held before it was forwarded
  std::string_view upstream;  // the upstream's name; "" when not proxied
  double upstream_ms = -1;    // < 0: not proxied
  std::string_view dry_run;   // a dry-run rule that would have refused the request
};

// Appends one line (ending in '\n') to `out`. Text: the columns separated by one space, each
// with every byte outside printable ASCII, space, '"' and '\' written as \xHH (and a lone "-"
// as \x2d), so no value can add a column or a line. JSON: one object; a text that is not valid
// UTF-8 has its bytes over 0x7f written as \xHH first, so every line is valid JSON.
void format_access_line(const AccessFields& f, config::AccessLogFormat format, std::string& out);

// The id of a request: the client's X-Request-Id when it is 1 to kMaxRequestId printable ASCII
// bytes other than '"' and '\' (false otherwise: the caller makes one).
inline constexpr std::size_t kMaxRequestId = 128;
bool usable_request_id(std::string_view id);

// A fresh id, 32 lowercase hex digits as nginx's $request_id (from a per-thread generator seeded
// at random: unique, not secret), written into `out` (the digits and a NUL).
void make_request_id(char (&out)[33]);

}  // namespace sluice::server::gateway
