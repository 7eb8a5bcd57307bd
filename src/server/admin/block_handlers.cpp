// The block listing handler (block_handlers.hpp).
#include "block_handlers.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "check_handlers.hpp"
#include "key_handlers.hpp"
#include "sluice/core/utf8.hpp"
#include "sluice/proto/http/request_target.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

// n=1..kMaxListed, at most once; nullopt with `error` set otherwise.
std::optional<std::size_t> parse_n(std::string_view query, std::optional<Reply>& error) {
  std::optional<std::size_t> n;
  const std::string range = "1 to " + std::to_string(engine::BlockList::kMaxListed);
  for (const auto& [name, value] : proto::http::form_pairs(query)) {
    if (name != "n") {
      error = error_reply(400, "unknown query parameter '" + name + "' (accepted: n)", name);
      return std::nullopt;
    }
    if (n) {
      error = error_reply(400, "query parameter 'n' given twice", "n");
      return std::nullopt;
    }
    const auto v = core::parse_count(value, "n");
    if (!v || *v < 1 || static_cast<std::size_t>(*v) > engine::BlockList::kMaxListed) {
      error = error_reply(400, "bad n '" + value + "': must be " + range, "n");
      return std::nullopt;
    }
    n = static_cast<std::size_t>(*v);
  }
  return n.value_or(engine::BlockList::kDefaultListed);
}

// A key that is not UTF-8 is shown with \xHH escapes, and given exactly as `key_hex`.
json::object entry(const engine::BlockedKey& k, bool hashed) {
  json::object o;
  const bool text = !core::invalid_utf8_at(k.key);
  o["key"] = text ? k.key : core::printable(k.key);
  if (!text) o["key_hex"] = core::hex(k.key);
  if (!hashed && k.key_bytes > k.key.size()) o["key_bytes"] = k.key_bytes;
  o["retry_after_ms"] = ceil_ms(k.left);
  return o;
}

Reply answer(const std::string& rule, const engine::BlockList& list) {
  if (list.error_kind != engine::ErrorKind::kNone) {
    return error_reply(key_error_status(list.error_kind), list.error,
                       engine::error_field(list.error_kind));
  }
  json::array blocks;
  for (const engine::BlockedKey& k : list.keys) blocks.push_back(entry(k, list.hashed));
  json::object o;
  o["rule"] = rule;
  o["storage"] = list.redis ? "redis" : "local";
  o["hashed"] = list.hashed;
  o["count"] = list.keys.size();
  o["total"] = list.total;
  o["truncated"] = list.total > list.read;
  o["capacity"] = list.capacity;
  o["blocks"] = std::move(blocks);
  return json_reply(200, o);
}

}  // namespace

Reply list_blocks(engine::Loop& loop, std::string_view rule, std::string_view query,
                  core::Nanos now) {
  std::optional<Reply> error;
  const auto n = parse_n(query, error);
  if (!n) return *error;
  Reply reply;
  reply.later = [&loop, rule = std::string(rule), n = *n, now](std::function<void(Reply)> done) {
    loop.list_blocks(rule, n, now, [rule, done = std::move(done)](engine::BlockList list) {
      done(answer(rule, list));
    });
  };
  return reply;
}

}  // namespace sluice::server
