// The text of the last answer a connection made locally, and of its rate-limit fields, kept and
// remade only when what they are made from changes. A client refused again and again gets the
// same bytes each time (the same rule, nothing left, the same retry time): under such a flood a
// 429 is copied from the last one instead of formatted anew (issue 20: a refusal written from a
// template). One per connection; a hit costs a few comparisons.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/limit_fields.hpp"
#include "proxy_head.hpp"

namespace sluice::server::gateway {

// proto::http::append_ratelimit_fields as text, made again only when an input differs.
class RepeatedFields {
 public:
  std::string_view lines(const LimitFields& limits, proto::http::FieldChoice choice,
                         core::Nanos retry_after) {
    const std::int64_t retry = retry_after < 0 ? -1 : proto::http::retry_after_seconds(retry_after);
    if (!made_ || choice != choice_ || retry != retry_ || limits != from_) {
      text_.clear();
      proto::http::append_ratelimit_fields(text_, limits, choice, retry_after);
      remember(limits);
      choice_ = choice;
      retry_ = retry;
      made_ = true;
    }
    return text_;
  }

 private:
  // The limits' names belong to a rule set that a reload may free: from_ names its own copies.
  void remember(const LimitFields& limits) {
    names_.clear();
    for (const auto& l : limits) names_ += l.name;
    from_ = limits;
    std::size_t at = 0;
    for (auto& l : from_) {
      l.name = std::string_view(names_).substr(at, l.name.size());
      at += l.name.size();
    }
  }

  bool made_ = false;
  LimitFields from_;
  std::string names_;
  proto::http::FieldChoice choice_;
  std::int64_t retry_ = -1;  // Retry-After in seconds, -1 none
  std::string text_;
};

// A local answer's head and body (append_local_response_head), made again only when a part
// differs from the last answer's.
class RepeatedAnswer {
 public:
  // `body`: what follows the head (empty for a HEAD request); `length`: its Content-Length.
  std::string_view text(int status, std::string_view body, std::size_t length, ExtraFields extra,
                        bool keep_alive, unsigned client_version, bool typed) {
    if (status != status_ || length != length_ || keep_alive != keep_alive_ ||
        client_version != version_ || typed != typed_ || extra != extra_ ||
        std::string_view(text_).substr(text_.size() - body_size_) != body) {
      text_.clear();
      append_local_response_head(text_, status, length, extra, keep_alive, client_version, typed);
      text_ += body;
      status_ = status;
      length_ = length;
      keep_alive_ = keep_alive;
      version_ = client_version;
      typed_ = typed;
      extra_.assign(extra);
      body_size_ = body.size();
    }
    return text_;
  }

 private:
  int status_ = 0;  // none made yet
  std::size_t length_ = 0;
  bool keep_alive_ = false;
  unsigned version_ = 0;
  bool typed_ = false;
  std::string extra_;
  std::size_t body_size_ = 0;  // the body is the end of text_
  std::string text_;
};

}  // namespace sluice::server::gateway
