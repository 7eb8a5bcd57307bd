// A rule's cost after the response (`cost_from`, `reserve`, `count_if`): each field read and
// checked where it is written; whether the rule's algorithm and storage can settle is checks.cpp's.
#include "readers.hpp"
#include "sluice/core/settle.hpp"
#include "sluice/core/status_set.hpp"

namespace sluice::config::internal {

namespace {

constexpr std::string_view kResponseHeader = "response_header:";

}  // namespace

void read_cost(Section& s, Rule& r) {
  if (auto t = s.text("cost_from")) {
    const std::string name =
        t->starts_with(kResponseHeader) ? t->substr(kResponseHeader.size()) : std::string();
    if (name.empty() || !is_token(name)) {
      s.fail("cost_from", quoted(*t) +
                              ": expected response_header:NAME (the response header in which the "
                              "upstream states the cost)");
    } else {
      r.cost_from = name;
    }
  }
  if (auto n = s.number("reserve", 1, core::kMaxStatedCost)) {
    r.reserve = *n;
    if (!s.has("cost_from")) {
      s.fail("reserve",
             "applies with cost_from only (what admission charges until the response "
             "states the cost)");
    }
  }
  auto c = s.section("count_if", {"status"});
  if (!c) return;
  auto items = c->list("status", true);
  if (!items) {
    if (!c->has("status")) c->fail("status", "count_if needs status (e.g. status: [401, 403])");
    return;
  }
  for (const auto& item : *items) {
    if (!core::is_status_entry(item.text)) {
      c->fail(item.path, item.line,
              quoted(item.text) + " is not a status (100 to 599) or a class (e.g. 4xx)");
      continue;
    }
    r.count_if_status.push_back(item.text);
  }
  if (items->empty()) c->fail("status", "count_if needs at least one status");
}

}  // namespace sluice::config::internal
