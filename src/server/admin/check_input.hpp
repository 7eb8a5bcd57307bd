// What a decision-API request asks (docs/admin-api.md, "Decision API"): one check read from a
// JSON object (POST /v1/check, and each item of a batch) or from a query string (GET
// /v1/check/{rule}), checked field by field so that every refusal names the input at fault.
// No limiter arithmetic here: the engine decides.
#pragma once

#include <boost/json/object.hpp>
#include <boost/system/error_code.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/core/time.hpp"

namespace sluice::server {

// Costs up to 2^53, the integers a JSON number carries exactly in every client language.
inline constexpr std::int64_t kMaxCheckCost = std::int64_t{1} << 53;
inline constexpr std::size_t kMaxBatchChecks = 1000;

struct CheckInput {
  std::string rule;   // a configured rule, by name; empty for an inline limit
  std::string limit;  // an inline limit spec ("gcra:rate=10/s,burst=5"); empty for a rule
  std::string key;
  std::int64_t cost = 1;
  core::Nanos max_wait = 0;  // inline limits only: a rule has its own
  std::string tier;          // rules only: the tier the caller puts the key in
};

// A refused input: the problem in words, and the field at fault ("key", "cost", "body", ...).
struct InputError {
  std::string error;
  std::string field;
};

struct ParsedCheck {
  CheckInput input;
  std::optional<InputError> error;
};

// Why a POST body did not parse as JSON (`ec`, from boost::json::parse). A body that is JSON
// but for bytes that are not UTF-8 is named by the field holding them ("key"), else "body".
InputError body_error(std::string_view body, const boost::system::error_code& ec);

// One check from a JSON object: {"rule"|"limit", "key", "cost"?, "max_wait"?}. Unknown fields
// are refused by name, so that a misspelt "cots" does not silently cost 1.
ParsedCheck parse_check(const boost::json::object& object);

// One check of `rule` from a query string: key=K (required) and cost=N. Names and values are
// percent-decoded, '+' is a space, and a '%' not followed by two hex digits stays as sent
// (a key copied by nginx from a client header is passed on unescaped). Other parameters, and
// a parameter given twice, are refused.
ParsedCheck parse_check_query(std::string rule, std::string_view query);

}  // namespace sluice::server
