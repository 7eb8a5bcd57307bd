// The copy of a good response the gateway takes while relaying it, for an open breaker's stale
// answers: its end-to-end fields and its body, given up as soon as it exceeds the cache's entry.
#pragma once

#include <boost/beast/core/string.hpp>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "proxy_head.hpp"
#include "sluice/proto/http/response_head.hpp"

namespace sluice::server::gateway {

class StaleCopy {
 public:
  // Starts a copy of the response `res` when it may be kept: `limit` > 0 (the request is a GET
  // on a route that answers stale), a 2xx, and nothing in it that is one client's alone or
  // asks not to be stored (Set-Cookie, Cache-Control: no-store or private: nginx's rules).
  // `drop` names fields the client never gets (a rule's cost_from header): not kept either.
  void start(const proto::http::ResponseHead& res, std::size_t limit,
             const std::function<bool(std::string_view)>& drop = {}) {
    on_ = false;
    headers_.clear();
    body_.clear();
    limit_ = limit;
    if (limit == 0 || res.status / 100 != 2) return;
    for (const proto::http::HeadField& f : res.fields) {
      if (boost::beast::iequals(f.name, "Set-Cookie")) return;
      if (boost::beast::iequals(f.name, "Cache-Control") && private_or_no_store(f.value)) return;
      if (dropped(f.name) || (drop && drop(f.name))) continue;
      headers_ += f.name;
      headers_ += ": ";
      headers_ += f.value;
      headers_ += "\r\n";
    }
    on_ = headers_.size() <= limit_;
  }

  bool on() const { return on_; }
  void add(std::string_view piece) {
    if (!on_) return;
    if (headers_.size() + body_.size() + piece.size() > limit_) {
      on_ = false;
      body_.clear();
      return;
    }
    body_ += piece;
  }
  std::string take_headers() { return std::move(headers_); }
  std::string take_body() { return std::move(body_); }
  void stop() { on_ = false; }

 private:
  static bool private_or_no_store(std::string_view v) {
    for (std::string_view word : {"no-store", "private"}) {
      for (std::size_t at = 0; at + word.size() <= v.size(); ++at) {
        if (boost::beast::iequals(v.substr(at, word.size()), word)) return true;
      }
    }
    return false;
  }
  // Each hop's own fields, and Age: the stale answer writes its own.
  static bool dropped(std::string_view name) {
    return is_hop_by_hop(name) || boost::beast::iequals(name, "Age");
  }

  bool on_ = false;
  std::size_t limit_ = 0;
  std::string headers_;
  std::string body_;
};

}  // namespace sluice::server::gateway
