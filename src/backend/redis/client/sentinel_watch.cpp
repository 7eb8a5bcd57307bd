// SentinelWatch (sentinel_watch.hpp).
#include "sentinel_watch.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>

namespace sluice::backend::redis::detail {

namespace {

constexpr std::string_view kSwitchChannel = "+switch-master";

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned port = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, port);
  if (text.empty() || ec != std::errc() || ptr != end || port == 0 || port > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(port);
}

// "+switch-master" carries "NAME OLD_IP OLD_PORT NEW_IP NEW_PORT".
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto space = text.find(' ');
    if (space != 0) out.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

}  // namespace

SentinelWatch::SentinelWatch(boost::asio::io_context& io, std::vector<Endpoint> sentinels,
                             std::string master, ConnectionOptions options, OnMaster on_master,
                             void (*log)(const std::string&))
    : io_(io),
      sentinels_(std::move(sentinels)),
      master_(std::move(master)),
      options_(std::move(options)),
      subscriber_options_(options_),
      on_master_(std::move(on_master)),
      log_(log),
      backoff_(options_.reconnect_min),
      retry_timer_(io) {
  subscriber_options_.subscriber = true;
  commands_.resize(sentinels_.size());
}

SentinelWatch::~SentinelWatch() { close(); }

void SentinelWatch::start() {
  if (sentinels_.empty()) {
    last_error_ = "no sentinel configured";
    return;
  }
  subscribe_to(0);
  ask();
}

void SentinelWatch::close() {
  if (closed_) return;
  closed_ = true;
  *alive_ = false;
  retry_timer_.cancel();
  if (subscriber_) subscriber_->close();
  for (auto& c : commands_) {
    if (c) c->close();
  }
}

Connection& SentinelWatch::command_connection(std::size_t index) {
  auto& c = commands_[index];
  if (!c) c = std::make_shared<Connection>(io_, sentinels_[index], options_, *this, next_id_++);
  return *c;
}

// ---- asking ----

void SentinelWatch::ask() {
  if (closed_ || asking_ || sentinels_.empty()) return;
  asking_ = true;
  ++asks_;
  ask_from(preferred_, 0);
}

void SentinelWatch::ask_from(std::size_t index, std::size_t tried) {
  if (tried == sentinels_.size()) {
    round_failed();
    return;
  }
  auto request = std::make_unique<Request>();
  request->internal = true;
  request->deadline = options_.clock->now() + options_.connect_timeout + options_.timeout;
  request->args = {"SENTINEL", "get-master-addr-by-name", master_};
  request->done = [this, index, tried](Outcome outcome) { on_answer(index, tried, outcome); };
  Connection& c = command_connection(index);
  if (c.send(request) != Connection::Admit::kQueued) {
    last_error_ = c.last_error().empty() ? "sentinel " + c.name() + " is down" : c.last_error();
    ask_from((index + 1) % sentinels_.size(), tried + 1);
  }
}

void SentinelWatch::on_answer(std::size_t index, std::size_t tried, const Outcome& outcome) {
  if (closed_) return;
  const std::string who = "sentinel " + format_endpoint(sentinels_[index]);
  if (const auto* failure = std::get_if<Failure>(&outcome)) {
    last_error_ = failure->message;
  } else {
    const Reply& r = std::get<Reply>(outcome);
    if (r.type == Reply::Type::kArray && r.elements.size() == 2) {
      if (const auto port = parse_port(r.elements[1].str); port && !r.elements[0].str.empty()) {
        asking_ = false;
        preferred_ = index;
        last_error_.clear();
        backoff_ = options_.reconnect_min;
        // Follow announcements on a sentinel known to answer, if the one followed is away.
        if (!subscriber_ || subscriber_->state() == Connection::State::kBackoff) {
          subscribe_to(index);
        }
        on_master_(Endpoint{r.elements[0].str, *port});
        return;
      }
      last_error_ = who + " named the master at an unreadable address";
    } else if (r.type == Reply::Type::kNil) {
      last_error_ = who + " does not know a master named '" + master_ + "'";
    } else if (r.is_error()) {
      last_error_ = who + ": " + r.str;
    } else {
      last_error_ = who + " answered get-master-addr-by-name unreadably";
    }
  }
  ask_from((index + 1) % sentinels_.size(), tried + 1);
}

void SentinelWatch::round_failed() {
  asking_ = false;
  last_error_ = "no sentinel named the master '" + master_ + "' (" + last_error_ + ")";
  if (log_ != nullptr) log_(last_error_);
  retry_timer_.expires_after(std::chrono::nanoseconds(backoff_));
  retry_timer_.async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](const boost::system::error_code& ec) {
        if (ec || alive.expired() || !*alive.lock()) return;
        ask();
      });
  backoff_ = std::min(backoff_ * 2, std::max(options_.reconnect_max, options_.reconnect_min));
}

// ---- following +switch-master ----

void SentinelWatch::subscribe_to(std::size_t index) {
  if (closed_) return;
  if (subscriber_) subscriber_->close();
  subscribed_to_ = index;
  subscriber_ =
      std::make_shared<Connection>(io_, sentinels_[index], subscriber_options_, *this, next_id_++);
  subscriber_->start();
}

void SentinelWatch::on_push(Connection& from, Reply reply) {
  if (closed_ || &from != subscriber_.get()) return;
  if (reply.type != Reply::Type::kArray || reply.elements.size() != 3 ||
      reply.elements[0].str != "message" || reply.elements[1].str != kSwitchChannel) {
    return;
  }
  const auto w = words(reply.elements[2].str);
  if (w.size() != 5 || w[0] != master_) return;
  const auto port = parse_port(w[4]);
  if (!port) return;
  on_master_(Endpoint{std::string(w[3]), *port});
}

// ---- connection events ----

void SentinelWatch::on_reply(Connection&, RequestPtr request, Reply reply) {
  Callback done = std::move(request->done);
  request.reset();
  if (done) done(std::move(reply));
}

void SentinelWatch::on_failure(Connection&, RequestPtr request, Failure failure) {
  Callback done = std::move(request->done);
  request.reset();
  if (done) done(std::move(failure));
}

void SentinelWatch::on_connected(Connection& c, bool again) {
  if (closed_ || &c != subscriber_.get()) return;
  auto request = std::make_unique<Request>();
  request->internal = true;
  request->deadline = options_.clock->now() + options_.timeout;
  request->args = {"SUBSCRIBE", std::string(kSwitchChannel)};
  c.send(request);
  // Announcements made while this subscription was down are lost: ask instead.
  if (again) ask();
}

void SentinelWatch::on_down(Connection&) {}

}  // namespace sluice::backend::redis::detail
