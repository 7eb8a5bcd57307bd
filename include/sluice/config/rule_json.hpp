// A rule as the admin API shows it (GET /v1/rules): built once as a JSON value, which the API
// answers as it is and parse_rule reads back; no text is printed and parsed again on the way.
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "sluice/config/rule_set.hpp"

namespace sluice::config {

// {"name":..,"limit":"..","key":["query:userId"],"action":"delay","max_wait":"500ms",
//  "status":429,"body":"..","on_missing_key":"skip"}: each field the rule sets or that matters
// for its kind of limit, in that order.
boost::json::object rule_json(const Rule& rule);

// The same as text.
std::string rule_to_json(const Rule& rule);

}  // namespace sluice::config
