// Reading a check from JSON or a query string (check_input.hpp).
#include "check_input.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <utility>

#include "sluice/core/utf8.hpp"
#include "sluice/proto/http/request_target.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

const std::string kCostRange = "a whole number from 1 to 2^53 (9007199254740992)";

ParsedCheck refused(std::string error, std::string field) {
  ParsedCheck out;
  out.error = InputError{std::move(error), std::move(field)};
  return out;
}

// A cost is a whole number from 1 to 2^53, however the JSON spelt it (3, 3.0, 3e0).
std::optional<std::int64_t> cost_of(const json::value& v) {
  std::optional<std::int64_t> n;
  if (v.is_int64()) {
    n = v.get_int64();
  } else if (v.is_uint64()) {
    if (v.get_uint64() <= static_cast<std::uint64_t>(kMaxCheckCost)) {
      n = static_cast<std::int64_t>(v.get_uint64());
    }
  } else if (v.is_double()) {
    const double d = v.get_double();
    if (d >= 1 && d <= static_cast<double>(kMaxCheckCost) && std::trunc(d) == d) {
      n = static_cast<std::int64_t>(d);
    }
  }
  if (!n || *n < 1 || *n > kMaxCheckCost) return std::nullopt;
  return n;
}

// Fills `out` from one field; returns the problem, if any.
std::optional<InputError> read_field(std::string_view name, const json::value& v, CheckInput& out) {
  auto text = [&](std::string& into) -> std::optional<InputError> {
    if (!v.is_string())
      return InputError{"'" + std::string(name) + "' must be a string", std::string(name)};
    into = std::string(v.get_string());
    return std::nullopt;
  };
  if (name == "rule") return text(out.rule);
  if (name == "limit") return text(out.limit);
  if (name == "key") return text(out.key);
  if (name == "cost") {
    const auto cost = cost_of(v);
    if (!cost) {
      return InputError{"bad cost " + json::serialize(v) + ": must be " + kCostRange, "cost"};
    }
    out.cost = *cost;
    return std::nullopt;
  }
  if (name == "max_wait") {
    std::string wait;
    if (auto bad = text(wait)) return bad;
    auto parsed = core::parse_duration(wait);
    if (!parsed) return InputError{"bad max_wait: " + parsed.error(), "max_wait"};
    out.max_wait = *parsed;
    return std::nullopt;
  }
  return InputError{
      "unknown field '" + std::string(name) + "' (accepted: rule, limit, key, cost, max_wait)",
      std::string(name)};
}

// The rules every check obeys, however it arrived.
std::optional<InputError> complete(const CheckInput& in, bool has_max_wait) {
  if (in.key.empty()) {
    return InputError{"missing key: give the key to count against (a user id, an address...)",
                      "key"};
  }
  if (!in.rule.empty() && !in.limit.empty()) {
    return InputError{
        "give either 'rule' (a configured rule) or 'limit' (an inline limit), not both", "limit"};
  }
  if (in.rule.empty() && in.limit.empty()) {
    return InputError{
        "missing rule: give 'rule' (a configured rule's name) or 'limit' (an inline limit "
        "such as \"gcra:rate=10/s,burst=5\")",
        "rule"};
  }
  if (has_max_wait && !in.rule.empty()) {
    return InputError{
        "'max_wait' goes with an inline 'limit'; rule '" + in.rule + "' waits as its config says",
        "max_wait"};
  }
  return std::nullopt;
}

// The field of `object` (or of a check in its batch) whose name or text is not UTF-8.
std::optional<std::string> field_not_utf8(const json::object& object) {
  for (const auto& [name, value] : object) {
    if (core::invalid_utf8_at(name)) return "body";
    if (value.is_string() && core::invalid_utf8_at(value.get_string())) return std::string(name);
    if (name == "checks" && value.is_array()) {
      for (const auto& item : value.get_array()) {
        if (!item.is_object()) continue;
        if (auto inner = field_not_utf8(item.get_object())) return inner;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

InputError body_error(std::string_view body, const boost::system::error_code& ec) {
  if (!core::invalid_utf8_at(body)) return {"the body is not JSON: " + ec.message(), "body"};
  json::parse_options lenient;
  lenient.allow_invalid_utf8 = true;
  boost::system::error_code again;
  const json::value doc = json::parse(body, again, {}, lenient);
  std::string field = "body";
  if (!again && doc.is_object()) field = field_not_utf8(doc.get_object()).value_or("body");
  const std::string what = field == "body" ? "the body" : "field '" + field + "'";
  return {what +
              " is not valid UTF-8, as JSON must be; a key that is not text can be sent "
              "percent-encoded to GET /v1/check/{rule}?key=...",
          field};
}

ParsedCheck parse_check(const json::object& object) {
  ParsedCheck out;
  for (const auto& [name, value] : object) {
    if (auto bad = read_field(name, value, out.input)) {
      out.error = std::move(bad);
      return out;
    }
  }
  out.error = complete(out.input, object.contains("max_wait"));
  return out;
}

ParsedCheck parse_check_query(std::string rule, std::string_view query) {
  ParsedCheck out;
  out.input.rule = std::move(rule);
  bool has_key = false;
  bool has_cost = false;
  for (const auto& [name, value] : proto::http::form_pairs(query)) {
    bool* seen = name == "key" ? &has_key : name == "cost" ? &has_cost : nullptr;
    if (seen == nullptr) {
      return refused("unknown query parameter '" + name + "' (accepted: key, cost)", name);
    }
    if (*seen) return refused("query parameter '" + name + "' given twice", name);
    *seen = true;
    if (name == "key") {
      out.input.key = value;
      continue;
    }
    auto cost = core::parse_count(value, "cost");
    if (!cost || *cost < 1 || *cost > kMaxCheckCost) {
      return refused("bad cost '" + value + "': must be " + kCostRange, "cost");
    }
    out.input.cost = *cost;
  }
  out.error = complete(out.input, false);
  return out;
}

}  // namespace sluice::server
