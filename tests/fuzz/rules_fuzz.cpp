// Fuzz target: the admin API's bodies: a rule in JSON or YAML (config::parse_rule, PUT
// /v1/rules/{name} and :validate) and a decision check (POST /v1/check, GET /v1/check/{rule}).
//
// Input: the first line is the rule name from the path, the rest the body. A rule that parses
// is written as JSON (rule_to_json, what GET /v1/rules answers) and must parse back to the
// same JSON. The body also goes to the check API's readers as a JSON object, a batch, and a
// query string.
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check_input.hpp"
#include "fuzz_check.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/config/rule_json.hpp"

namespace {

void check_rule(const std::string& name, std::string_view body) {
  const auto rule = sluice::config::parse_rule(name, body);
  if (!rule) {
    SLUICE_FUZZ_CHECK(!rule.error().empty(), "a refused rule says why");
    return;
  }
  const std::string json = sluice::config::rule_to_json(*rule);
  const auto again = sluice::config::parse_rule(rule->name, json);
  if (!again)
    std::fprintf(stderr, "written: %s\nrefused: %s\n", json.c_str(), again.error().c_str());
  SLUICE_FUZZ_CHECK(static_cast<bool>(again), "a rule written as JSON parses back");
  SLUICE_FUZZ_CHECK(sluice::config::rule_to_json(*again) == json, "a rule's JSON round-trips");
}

void check_checks(const std::string& rule, std::string_view body) {
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(body, ec);
  if (!ec && doc.is_object()) {
    const auto& object = doc.get_object();
    (void)sluice::server::parse_check(object);
    if (const auto* checks = object.if_contains("checks"); checks && checks->is_array()) {
      for (const auto& item : checks->get_array()) {
        if (item.is_object()) (void)sluice::server::parse_check(item.get_object());
      }
    }
  }
  const auto parsed = sluice::server::parse_check_query(rule, body);
  if (!parsed.error) {
    SLUICE_FUZZ_CHECK(parsed.input.cost >= 1 && parsed.input.cost <= sluice::server::kMaxCheckCost,
                      "an accepted cost is within its range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  const std::string name(nl == std::string_view::npos ? std::string_view() : input.substr(0, nl));
  const std::string_view body = nl == std::string_view::npos ? input : input.substr(nl + 1);
  check_rule(name, body);
  check_checks(name, body);
  return 0;
}
