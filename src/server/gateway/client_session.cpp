// ClientSession (client_session.hpp): the request loop (read a head, ask the engine, act on the
// outcome), local answers, and closing; the upstream half is upstream_exchange.cpp.
#include "client_session.hpp"

#include <fmt/format.h>

#include <boost/beast/http/error.hpp>
#include <chrono>

#include "http_io.hpp"
#include "sluice/log/log.hpp"
#include "worker.hpp"

namespace sluice::server::gateway {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// The rule an access-log line names: the one that refused; for an admitted request, the one
// that held it longest, else the one closest to its limit (the smallest share of its capacity
// left after this request; the first in route order on a tie or without numbers). Null: none
// took part (a route without rules, no route, or a refusal no single rule made).
const engine::Applied* deciding_rule(const engine::Outcome& o) {
  if (o.decided_by >= 0) return &o.applied[static_cast<std::size_t>(o.decided_by)];
  if (o.verdict != engine::Verdict::kAllow) return nullptr;
  const engine::Applied* first = nullptr;
  const engine::Applied* held = nullptr;
  const engine::Applied* closest = nullptr;
  double closest_share = 2;
  for (const engine::Applied& a : o.applied) {
    if (!a.enforced) continue;
    const core::Decision& d = a.decision;
    if (first == nullptr) first = &a;
    if (d.delay > 0 && (held == nullptr || d.delay > held->decision.delay)) held = &a;
    if (d.remaining >= 0 && d.limit > 0) {
      const double share = static_cast<double>(d.remaining) / static_cast<double>(d.limit);
      if (share < closest_share) {
        closest_share = share;
        closest = &a;
      }
    }
  }
  if (held != nullptr) return held;
  return closest != nullptr ? closest : first;
}

constexpr std::size_t kLingerBytes = 1u << 20;
constexpr auto kLingerTime = std::chrono::seconds(1);

std::string peer_text(const Socket& s) {
  error_code ec;
  const auto ep = s.remote_endpoint(ec);
  if (ec) return "-";
  auto a = ep.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  return a.to_string();
}

// The status for a request head that could not be read; 0: close without a word (the client
// left, or the shutdown closed an idle connection).
template <class Parser>
int head_error_status(const error_code& ec, const Parser& parser) {
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    // The parser consumes the request line once it has it: no method yet means the line
    // alone was too long, and only the target can make it so.
    return parser.get().method_string().empty() ? 414 : 431;
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return 0;
  if (ec == http::error::body_limit) return 413;  // Content-Length over http.max_body_size
  return is_parse_error(ec) ? 400 : 0;
}

}  // namespace

ClientSession::ClientSession(Worker& worker, Socket socket)
    : worker_(worker),
      client_(std::move(socket)),
      client_watch_(client_.get_executor(), worker_.clock(),
                    [this] {
                      error_code ignored;
                      if (reading_body_) {
                        // Cancelled, not closed: the client is owed a 408.
                        body_timed_out_ = true;
                        client_.cancel(ignored);
                      } else {
                        client_.close(ignored);
                      }
                    }),
      upstream_watch_(client_.get_executor(), worker_.clock(),
                      [this] {
                        upstream_timed_out_ = true;
                        error_code ignored;
                        if (upstream_io_ != nullptr) upstream_io_->close(ignored);
                      }),
      abort_watch_(client_, [this] {
        client_aborted_ = true;
        error_code ignored;
        if (upstream_io_ != nullptr) upstream_io_->close(ignored);
        worker_.loop().leave_queue(outcome_);  // waiting for an adaptive permit: not any more
      }) {
  error_code ignored;
  client_.non_blocking(true, ignored);  // for write_all's first, synchronous attempt
  peer_ = peer_text(client_);
  if (!peer_address_.parse(peer_)) peer_address_ = {};
  forwarded_node_ = forwarded_node(peer_);
  const config::RuleSet& rules = worker_.loop().rules();
  timeouts_ = rules.timeouts;
  escaped_slashes_ = rules.escaped_slashes;
  bodies_ = rules.bodies;
  worker_.add(this);
  worker_.stats().open_connections.add(1);
}

ClientSession::~ClientSession() {
  worker_.remove(this);
  worker_.stats().open_connections.add(-1);
}

void ClientSession::close_if_idle() {
  if (!idle_) return;
  error_code ignored;
  client_.cancel(ignored);
}

Awaitable<void> ClientSession::run() {
  client_watch_.set_owner(weak_from_this());
  upstream_watch_.set_owner(weak_from_this());
  abort_watch_.set_owner(weak_from_this());
  try {
    while (co_await serve_one() == Next::kKeepAlive && !worker_.draining()) {
    }
    if (linger_ && client_.is_open()) co_await linger_close();
  } catch (const std::exception& e) {
    log::warn("sluice: gateway connection from " + peer_ + ": " + e.what());
  }
  client_watch_.stop();
  upstream_watch_.stop();
  abort_watch_.stop();
  error_code ignored;
  client_.shutdown(Socket::shutdown_both, ignored);
  client_.close(ignored);
}

ClientSession::RequestParser& ClientSession::new_request_parser() {
  parser_.reset();
  request_arena_.reset();
  RequestParser& p = parser_.emplace(std::piecewise_construct, std::make_tuple(),
                                     std::make_tuple(ArenaAllocator<char>(request_arena_)));
  p.header_limit(kMaxHeaderBytes);
  // Beast refuses a longer Content-Length at the head and a longer chunked body as it streams.
  p.body_limit(bodies_.max_size > 0 ? boost::optional<std::uint64_t>(bodies_.max_size)
                                    : boost::none);
  body_pace_ = {};
  body_timed_out_ = false;
  exchange_ = {};
  request_id_ = {};
  idle_ = client_buffer_.size() == 0;
  client_watch_.expires_after(ns(first_ ? timeouts_.header : timeouts_.idle));
  first_ = false;
  head_scan_.reset();
  return p;
}

Awaitable<ClientSession::Next> ClientSession::serve_one() {
  RequestParser& p = new_request_parser();
  const error_code ec = co_await read_head(client_, client_buffer_, p, head_scan_);
  idle_ = false;
  client_watch_.disarm();
  if (ec) co_return co_await refuse_head(head_error_status(ec, p));
  auto& req = p.get();
  // Never forwarded: a head whose body another reader could delimit otherwise.
  if (const auto problem = check_request_framing(req)) {
    co_return co_await refuse_head(problem.status);
  }

  const std::string_view target = req.target();
  if (target.size() > kMaxTargetBytes) co_return co_await refuse_head(414);

  engine::RequestView& view = view_;
  view = {};
  if (!read_request_head(req, escaped_slashes_, target_, view)) {
    co_return co_await refuse_head(400);
  }
  take_request_id(req);

  // The loop's time: every limit decides at this instant.
  const core::Nanos now = worker_.clock().now();
  headers_.clear();
  for (const auto& f : req) headers_.push_back({f.name_string(), f.value()});
  view.peer = peer_;
  view.peer_address = peer_address_.text().empty() ? nullptr : &peer_address_;
  view.headers = headers_;

  engine::Loop& loop = worker_.loop();
  if (loop.decide(view, now, outcome_) == engine::Progress::kPending) {
    // Rules kept in Redis: the loop's store batches this with its other requests; whatever
    // Redis does, the answer comes within the store's timeout (failure policy after that).
    co_await loop.async_complete(outcome_, boost::asio::use_awaitable_t<Executor>{});
  }
  if (outcome_.verdict == engine::Verdict::kAllow && outcome_.queued > 0) {
    // The route's adaptive limit is reached: in its queue, on a timer; then a permit or 503.
    // A client that leaves meanwhile gives its place back at once (as HAProxy's abortonclose).
    abort_watch_.start();
    co_await loop.async_permit(outcome_, boost::asio::use_awaitable_t<Executor>{});
    abort_watch_.stop();
    if (client_aborted_) co_return abandon_queued(now);
  }
  write_limit_fields();
  const bool keep_alive = p.keep_alive() && !worker_.draining();
  Next next = Next::kClose;
  switch (outcome_.verdict) {
    case engine::Verdict::kAllow:
      if (outcome_.upstream() == nullptr) {
        exchange_.decision = "respond";
        next = co_await respond_local(outcome_.status, outcome_.body, fields_, keep_alive);
        break;
      }
      exchange_.decision = "forward";
      if (outcome_.delay > 0) {
        // Held on a timer, never on the thread: the loop serves others meanwhile.
        exchange_.decision = "delay";
        Timer hold(client_.get_executor(), ns(outcome_.delay));
        co_await hold.async_wait(kNoThrow);
      }
      next = co_await call_upstream(keep_alive);
      break;
    case engine::Verdict::kDeny:
      exchange_.decision = outcome_.missing_key ? "missing-key" : "reject";
      next = co_await respond_local(outcome_.status, outcome_.body, fields_, keep_alive);
      break;
    case engine::Verdict::kNoRoute:
      exchange_.decision = "noroute";
      next = co_await respond_local(404, outcome_.body.empty() ? reason_body(404) : outcome_.body,
                                    fields_, keep_alive);
      break;
    case engine::Verdict::kInvalid:  // not for an HTTP request; never a silent pass
      exchange_.decision = "error";
      next = co_await respond_local(500, "Internal Server Error\n", {}, keep_alive);
      break;
  }
  finish_exchange(now);
  co_return next;
}

ClientSession::Next ClientSession::abandon_queued(core::Nanos now) {
  client_aborted_ = false;
  exchange_.decision = "abandon";
  worker_.stats().client_aborts.add();
  finish_exchange(now);  // logged as 499
  return Next::kClose;
}

void ClientSession::write_limit_fields() {
  const config::RuleSet& rules = outcome_.rules();
  timeouts_ = rules.timeouts;
  escaped_slashes_ = rules.escaped_slashes;
  limit_fields(outcome_, limit_fields_);
  fields_.assign(repeated_fields_.lines(limit_fields_, field_choice(rules), retry_after(outcome_)));
  if (!request_id_.empty()) {
    fields_ += "X-Request-Id: ";
    fields_ += request_id_;
    fields_ += "\r\n";
  }
}

void ClientSession::take_request_id(const RequestParser::value_type& req) {
  request_id_ = {};
  // Only with the access log on: without it nobody reads the id, and heads stay as they were.
  if (worker_.loop().rules().access_log.empty()) return;
  const auto given = req.find("X-Request-Id");
  if (given != req.end() && usable_request_id(given->value()) && req.count("X-Request-Id") == 1) {
    request_id_ = given->value();
    return;
  }
  make_request_id(made_request_id_);
  request_id_ = std::string_view(made_request_id_, 32);
}

void ClientSession::finish_exchange(core::Nanos now) {
  const config::RuleSet& rules = outcome_.rules();
  bodies_ = rules.bodies;
  held_.reset();
  breaker_ = {};  // not reported: the client left first (a probe's place goes back)
  if (exchange_.status == 0) exchange_.status = 499;  // the client left before its answer
  worker_.stats().response(exchange_.status);
  log(outcome_.client(), rules, true);
  // The outcome's permits (and its rules) are held until here: the response is written.
  worker_.loop().release(outcome_, exchange_.upstream,
                         exchange_.upstream_end > 0 ? exchange_.upstream_end : now);
  outcome_.reset();
}

Awaitable<ClientSession::Next> ClientSession::refuse_head(int status) {
  if (status == 0) co_return Next::kClose;
  exchange_.decision = "error";
  worker_.stats().response(status);
  co_await answer_error(status);
  log(peer_, worker_.loop().rules(), false);
  co_return Next::kClose;
}

Awaitable<void> ClientSession::answer_error(int status) {
  const std::string_view body = reason_body(status);
  head_.clear();
  append_local_response_head(head_, status, body.size(), {}, false, 11);
  head_ += body;
  exchange_.status = status;
  exchange_.bytes = body.size();
  client_watch_.expires_after(ns(timeouts_.idle));
  co_await write_all(client_, head_);
  client_watch_.disarm();
  linger_ = true;  // the rest of what it sent is unread
}

Awaitable<ClientSession::Next> ClientSession::respond_local(int status, std::string_view body,
                                                            ExtraFields extra, bool keep_alive,
                                                            bool typed) {
  RequestParser& p = *parser_;
  if (!p.is_done()) {
    // A body this answer does not need: skip a small one to keep the connection, else close.
    const auto length = p.content_length();
    if (keep_alive && !expects_continue(p.get()) && length && *length <= kDrainBytes) {
      keep_alive = co_await drain_request_body();
    } else {
      keep_alive = false;
      linger_ = true;
    }
  }
  const bool head_request = p.get().method() == http::verb::head;
  const std::string_view answer =
      repeated_answer_.text(status, head_request ? std::string_view() : body, body.size(), extra,
                            keep_alive, p.get().version(), typed);
  exchange_.status = status;
  exchange_.bytes = head_request ? 0 : body.size();
  client_watch_.expires_after(ns(timeouts_.idle));
  const error_code ec = co_await write_all(client_, answer);
  client_watch_.disarm();
  if (ec) co_return Next::kClose;
  co_return keep_alive ? Next::kKeepAlive : Next::kClose;
}

Awaitable<void> ClientSession::linger_close() {
  if (!body_) body_ = std::make_unique<char[]>(kPieceBytes);
  error_code ignored;
  client_.shutdown(Socket::shutdown_send, ignored);
  client_watch_.expires_after(kLingerTime);
  for (std::size_t total = 0; total < kLingerBytes;) {
    auto [ec, n] =
        co_await client_.async_read_some(asio::buffer(body_.get(), kPieceBytes), kNoThrow);
    if (ec) break;
    total += n;
  }
  client_watch_.disarm();
}

void ClientSession::log(std::string_view client, const config::RuleSet& rules, bool decided) {
  if (rules.access_log.empty()) return;
  const Exchange& x = exchange_;
  AccessFields f;
  f.client = client;
  if (parser_ && parser_->is_header_done()) {
    f.method = parser_->get().method_string();
    f.target = parser_->get().target();
  }
  f.request_id = request_id_;
  f.status = x.status;
  f.bytes = x.bytes;
  f.outcome = x.decision;
  f.upstream_ms = x.upstream_ms;
  if (decided) {
    if (const config::Route* route = outcome_.route()) f.route = route->name;
    if (const engine::Applied* a = deciding_rule(outcome_)) {
      f.rule = a->limit.name;
      if (outcome_.log_key(*a, view_, log_key_)) f.key = log_key_;
    }
    if (x.decision == "delay") f.delay_ms = static_cast<double>(outcome_.delay) / 1e6;
    const bool forwarded = x.decision == "forward" || x.decision == "delay";
    if (forwarded && outcome_.upstream() != nullptr) f.upstream = outcome_.upstream()->name;
    for (const engine::Applied& a : outcome_.applied) {
      if (!a.enforced && !a.decision.allowed) {
        f.dry_run = a.limit.name;
        break;
      }
    }
  }
  worker_.access_log().write(rules.access_log, rules.access_log_format, f);
}

}  // namespace sluice::server::gateway
