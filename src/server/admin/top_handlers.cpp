// The top keys handler (top_handlers.hpp).
#include "top_handlers.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <string>

#include "sluice/proto/http/request_target.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

constexpr std::size_t kDefaultCount = 20;

struct TopQuery {
  engine::TopBy by = engine::TopBy::kDenied;
  std::size_t n = kDefaultCount;
};

// by=denied|requests and n=1..capacity, each at most once; nullopt with `error` set otherwise.
std::optional<TopQuery> parse_query(std::string_view query, std::optional<Reply>& error) {
  TopQuery out;
  bool seen_by = false;
  bool seen_n = false;
  const std::string range = "1 to " + std::to_string(engine::TopKeys::kCapacity);
  for (const auto& [name, value] : proto::http::form_pairs(query)) {
    bool* seen = name == "by" ? &seen_by : name == "n" ? &seen_n : nullptr;
    if (seen == nullptr) {
      error = error_reply(400, "unknown query parameter '" + name + "' (accepted: by, n)", name);
      return std::nullopt;
    }
    if (*seen) {
      error = error_reply(400, "query parameter '" + name + "' given twice", name);
      return std::nullopt;
    }
    *seen = true;
    if (name == "by") {
      if (value != "denied" && value != "requests") {
        error = error_reply(400, "bad by '" + value + "': must be denied or requests", "by");
        return std::nullopt;
      }
      out.by = value == "denied" ? engine::TopBy::kDenied : engine::TopBy::kRequests;
      continue;
    }
    const auto n = core::parse_count(value, "n");
    if (!n || *n < 1 || static_cast<std::size_t>(*n) > engine::TopKeys::kCapacity) {
      error = error_reply(400, "bad n '" + value + "': must be " + range, "n");
      return std::nullopt;
    }
    out.n = static_cast<std::size_t>(*n);
  }
  return out;
}

}  // namespace

Reply top_keys(const engine::Engine& engine, std::string_view rule, std::string_view query,
               core::Nanos now) {
  std::optional<Reply> error;
  const auto q = parse_query(query, error);
  if (!q) return *error;
  const auto top = engine.top_keys(rule, q->by, q->n, now);
  if (!top) return error_reply(404, "unknown rule '" + std::string(rule) + "'", "rule");
  if (top->refused) {
    return error_reply(503,
                       "rule '" + std::string(rule) +
                           "' keeps no top keys: " + std::to_string(engine::TopKeys::kMaxRules) +
                           " rules of this process keep theirs, the most there may be",
                       "rule");
  }
  json::array keys;
  for (const engine::TopKey& k : top->keys) {
    keys.push_back(json::object{{"key", k.key}, {"requests", k.requests}, {"denied", k.denied}});
  }
  json::object o;
  o["rule"] = rule;
  o["by"] = q->by == engine::TopBy::kDenied ? "denied" : "requests";
  o["window_seconds"] = engine::TopKeys::kWindowSeconds;
  o["capacity"] = engine::TopKeys::kCapacity;
  o["keys"] = std::move(keys);
  return json_reply(200, o);
}

}  // namespace sluice::server
