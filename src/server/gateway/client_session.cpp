// ClientSession (client_session.hpp).
#include "client_session.hpp"

#include <fmt/format.h>

#include <array>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <chrono>
#include <cstdio>
#include <span>

#include "http_io.hpp"
#include "worker.hpp"

namespace sluice::server::gateway {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr std::size_t kLingerBytes = 1u << 20;
constexpr auto kLingerTime = std::chrono::seconds(1);

std::chrono::nanoseconds ns(core::Nanos n) { return std::chrono::nanoseconds(n); }

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

bool expects_continue(const http::request_header<Fields>& req) {
  const auto it = req.find(http::field::expect);
  return it != req.end() && beast::iequals(it->value(), "100-continue");
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

std::string_view reason_body(int status) {
  switch (status) {
    case 400:
      return "Bad Request\n";
    case 404:
      return "Not Found\n";
    case 408:
      return "Request Timeout\n";
    case 413:
      return "Content Too Large\n";
    case 414:
      return "URI Too Long\n";
    case 431:
      return "Request Header Fields Too Large\n";
    case 501:
      return "Not Implemented\n";
    case 502:
      return "Bad Gateway\n";
    case 504:
      return "Gateway Timeout\n";
    default:
      return "";
  }
}

}  // namespace

ClientSession::ClientSession(Worker& worker, Socket socket)
    : worker_(worker),
      client_(std::move(socket)),
      client_watch_(client_.get_executor(),
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
      upstream_watch_(client_.get_executor(), [this] {
        upstream_timed_out_ = true;
        error_code ignored;
        if (upstream_io_ != nullptr) upstream_io_->close(ignored);
      }) {
  error_code ignored;
  client_.non_blocking(true, ignored);  // for write_all's first, synchronous attempt
  peer_ = peer_text(client_);
  forwarded_node_ = forwarded_node(peer_);
  const auto snapshot = worker_.engine().snapshot();
  timeouts_ = snapshot->rules.timeouts;
  escaped_slashes_ = snapshot->rules.escaped_slashes;
  bodies_ = snapshot->rules.bodies;
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
  try {
    while (co_await serve_one() == Next::kKeepAlive && !worker_.draining()) {
    }
    if (linger_ && client_.is_open()) co_await linger_close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice: gateway connection from %s: %s\n", peer_.c_str(), e.what());
  }
  client_watch_.stop();
  upstream_watch_.stop();
  error_code ignored;
  client_.shutdown(Socket::shutdown_both, ignored);
  client_.close(ignored);
}

Awaitable<ClientSession::Next> ClientSession::serve_one() {
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
  idle_ = client_buffer_.size() == 0;
  client_watch_.expires_after(ns(first_ ? timeouts_.header : timeouts_.idle));
  first_ = false;
  head_scan_.reset();
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

  engine::RequestView view;
  if (!read_request_head(req, escaped_slashes_, target_, view)) {
    co_return co_await refuse_head(400);
  }

  // The loop's time: every limit decides at this instant.
  const core::Nanos now = worker_.clock().now();
  headers_.clear();
  for (const auto& f : req) headers_.push_back({f.name_string(), f.value()});
  view.peer = peer_;
  view.headers = headers_;

  engine::Loop& loop = worker_.loop();
  if (loop.decide(view, now, outcome_) == engine::Progress::kPending) {
    // Rules kept in Redis: the loop's store batches this with its other requests; whatever
    // Redis does, the answer comes within the store's timeout (failure policy after that).
    co_await loop.async_complete(outcome_, boost::asio::use_awaitable_t<Executor>{});
  }
  const config::RuleSet& rules = outcome_.snapshot->rules;
  timeouts_ = rules.timeouts;
  escaped_slashes_ = rules.escaped_slashes;
  fields_.clear();
  engine::limit_fields(outcome_, limit_fields_);
  proto::http::append_ratelimit_fields(fields_, limit_fields_,
                                       {rules.ratelimit_headers, rules.legacy_headers},
                                       engine::retry_after(outcome_));
  const bool keep_alive = p.keep_alive() && !worker_.draining();
  Next next = Next::kClose;
  switch (outcome_.verdict) {
    case engine::Verdict::kAllow:
      if (outcome_.route->upstream == nullptr) {
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
      next = co_await forward(keep_alive);
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
  if (outcome_.dry_run_denied()) {
    // A dry-run rule would have refused it: said in the access log and on stderr (at most
    // once a second per loop, with the count passed over), as nginx logs limit_req_dry_run.
    exchange_.dry_run_denied = true;
    worker_.warn_dry_run(outcome_, now);
  }
  bodies_ = rules.bodies;
  held_.reset();
  if (exchange_.status == 0) exchange_.status = 499;  // the client left before its answer
  worker_.stats().response(exchange_.status);
  log(exchange_, outcome_.client(), rules.access_log);
  // The outcome's permits (and its snapshot) are held until here: the response is written.
  loop.release(outcome_);
  outcome_.reset();
  co_return next;
}

Awaitable<ClientSession::Next> ClientSession::refuse_head(int status) {
  if (status == 0) co_return Next::kClose;
  exchange_.decision = "error";
  worker_.stats().response(status);
  co_await answer_error(status);
  const auto snapshot = worker_.engine().snapshot();
  log(exchange_, peer_, snapshot->rules.access_log);
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
                                                            ExtraFields extra, bool keep_alive) {
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
  head_.clear();
  append_local_response_head(head_, status, body.size(), extra, keep_alive, p.get().version());
  if (!head_request) head_ += body;
  exchange_.status = status;
  exchange_.bytes = head_request ? 0 : body.size();
  client_watch_.expires_after(ns(timeouts_.idle));
  const error_code ec = co_await write_all(client_, head_);
  client_watch_.disarm();
  if (ec) co_return Next::kClose;
  co_return keep_alive ? Next::kKeepAlive : Next::kClose;
}

Awaitable<ClientSession::Next> ClientSession::forward(bool keep_alive) {
  RequestParser& p = *parser_;
  const auto& req = p.get();
  if (!body_) body_ = std::make_unique<char[]>(kPieceBytes);
  bodies_ = outcome_.snapshot->rules.bodies;
  const ExtraFields extra = fields_;
  UpstreamPool& pool = worker_.pool();
  UpstreamState& up = pool.state(*outcome_.route->upstream, outcome_.snapshot->version);
  const bool head_request = req.method() == http::verb::head;

  Framing request_framing = Framing::kNone;
  std::uint64_t request_length = 0;
  if (p.chunked()) {
    request_framing = Framing::kChunked;
  } else if (const auto length = p.content_length()) {
    request_framing = Framing::kLength;
    request_length = *length;
  }
  const bool chunked_up = request_framing == Framing::kChunked;

  if (!p.is_done() && expects_continue(req)) {
    client_watch_.expires_after(ns(timeouts_.idle));
    const error_code ec = co_await write_all(client_, "HTTP/1.1 100 Continue\r\n\r\n");
    client_watch_.disarm();
    if (ec) co_return Next::kClose;
  }
  // What is read of the body before an upstream is chosen goes out with the head, in one write.
  std::string_view first;
  if (!p.is_done()) {
    auto [ec, got] = co_await read_body_ahead();
    if (ec) co_return co_await client_body_error(ec);
    first = {held_.get(), got};
  }
  // Still in hand whole: it can be sent again on another connection.
  const bool whole = p.is_done();

  const core::Nanos start = worker_.clock().now();
  std::uint64_t tried = 0;
  std::shared_ptr<ServerState> server;
  std::unique_ptr<UpstreamConnection> conn;
  std::optional<ResponseParser>& rp = response_;
  rp.reset();
  bool may_reuse = true;
  int failure = 502;
  std::size_t got = 0;
  for (;;) {
    if (!server) {
      server = pool.pick(up, start, tried);
      if (!server)
        co_return co_await respond_local(failure, reason_body(failure), extra, keep_alive);
      may_reuse = true;
    }
    // A whole request survives a pooled connection the server has closed meanwhile (it is
    // sent again on a fresh one), so only a streamed body needs the connection checked first.
    conn = may_reuse ? pool.take_idle(*server, /*check=*/!whole) : nullptr;
    if (!conn) {
      conn = co_await connect(*server);
      if (!conn) {
        // Nothing was sent: another server may take it.
        failure = upstream_timed_out_ ? 504 : 502;
        pool.failed(up, *server, worker_.clock().now());
        server.reset();
        continue;
      }
    }
    upstream_io_ = &conn->socket;
    upstream_timed_out_ = false;
    head_.clear();
    append_upstream_request_head(head_, req, target_.parts, peer_, forwarded_node_, request_framing,
                                 request_length, server->authority);
    upstream_watch_.expires_after(ns(timeouts_.upstream));
    error_code ec =
        co_await write_piece(conn->socket, head_, first, chunked_up, whole && chunked_up);
    while (!ec && !p.is_done()) {
      auto [read_ec, n] = co_await read_request_piece();
      if (read_ec) {
        upstream_watch_.disarm();
        upstream_io_ = nullptr;
        co_return co_await client_body_error(read_ec);
      }
      upstream_watch_.expires_after(ns(timeouts_.upstream));
      ec = co_await write_piece(conn->socket, {}, {body_.get(), n}, chunked_up,
                                p.is_done() && chunked_up);
    }
    if (!ec) {
      new_response_parser(head_request);
      upstream_watch_.expires_after(ns(timeouts_.upstream));
      ec = co_await read_head(conn->socket, conn->buffer, *rp);
      // Interim responses (103 Early Hints...) are not relayed; 100 was answered here.
      while (!ec && rp->get().result_int() / 100 == 1 && rp->get().result_int() != 101) {
        new_response_parser(head_request);
        ec = co_await read_head(conn->socket, conn->buffer, *rp);
      }
      if (!ec) std::tie(ec, got) = co_await read_response_piece(*conn, *rp);
    }
    if (!ec) break;

    // Failed before any of the response reached the client.
    const bool timed_out = upstream_timed_out_;
    const bool stale = conn->reused && !timed_out && whole && !(rp && rp->got_some());
    upstream_watch_.disarm();
    upstream_io_ = nullptr;
    conn.reset();
    rp.reset();
    if (stale) {
      // A pooled connection the server had closed: not the server's fault, try a fresh one.
      may_reuse = false;
      continue;
    }
    pool.failed(up, *server, worker_.clock().now());
    co_return co_await respond_local(timed_out ? 504 : 502, reason_body(timed_out ? 504 : 502),
                                     extra, keep_alive);
  }

  co_return co_await relay_response(up, *server, std::move(conn), *rp, got, extra, keep_alive,
                                    start);
}

Awaitable<ClientSession::Next> ClientSession::relay_response(
    UpstreamState& up, ServerState& server, std::unique_ptr<UpstreamConnection> conn,
    ResponseParser& rp, std::size_t got, ExtraFields extra, bool keep_alive, core::Nanos start) {
  UpstreamPool& pool = worker_.pool();
  const auto& req = parser_->get();
  const bool head_request = req.method() == http::verb::head;
  // Relay the response: head and first piece in one write, then piece by piece.
  const auto& res = rp.get();
  const int status = res.result_int();
  const bool has_body = !head_request && status / 100 != 1 && status != 204 && status != 304;
  Framing framing = Framing::kNone;
  std::uint64_t length = 0;
  if (has_body) {
    if (const auto cl = rp.content_length()) {
      framing = Framing::kLength;
      length = *cl;
    } else if (req.version() >= 11) {
      framing = Framing::kChunked;
    } else {
      framing = Framing::kClose;
    }
  }
  if (framing == Framing::kClose) keep_alive = false;
  const bool chunked_down = framing == Framing::kChunked;
  head_.clear();
  append_relayed_response_head(head_, res, extra, framing, length, keep_alive, req.version());
  exchange_.status = status;
  bool done = rp.is_done();
  client_watch_.expires_after(ns(timeouts_.idle));
  error_code ec =
      co_await write_piece(client_, head_, {body_.get(), got}, chunked_down, done && chunked_down);
  exchange_.bytes += got;
  bool upstream_broken = false;
  while (!ec && !done) {
    upstream_watch_.expires_after(ns(timeouts_.upstream));
    auto [read_ec, n] = co_await read_response_piece(*conn, rp);
    if (read_ec) {
      upstream_broken = true;
      break;
    }
    done = rp.is_done();
    client_watch_.expires_after(ns(timeouts_.idle));
    ec = co_await write_piece(client_, {}, {body_.get(), n}, chunked_down, done && chunked_down);
    exchange_.bytes += n;
  }
  client_watch_.disarm();
  upstream_watch_.disarm();
  upstream_io_ = nullptr;
  const core::Nanos end = worker_.clock().now();
  exchange_.upstream_ms = static_cast<double>(end - start) / 1e6;
  if (upstream_broken) {
    // Cut off mid-body: the client sees a truncated response and a closed connection.
    pool.failed(up, server, end);
    co_return Next::kClose;
  }
  up.stats->observe(end - start);
  pool.succeeded(server);
  if (ec) co_return Next::kClose;  // the client left; the upstream connection is dropped
  if (rp.keep_alive() && conn->buffer.size() == 0) {
    conn->reused = false;
    pool.put_idle(server, std::move(conn));
  }
  co_return keep_alive ? Next::kKeepAlive : Next::kClose;
}

Awaitable<std::unique_ptr<UpstreamConnection>> ClientSession::connect(ServerState& server) {
  upstream_timed_out_ = false;
  if (!server.address) {
    error_code ec;
    const auto address = asio::ip::make_address(server.endpoint.host, ec);
    if (!ec) {
      server.address.emplace(address, server.endpoint.port);
    } else {
      Resolver resolver(client_.get_executor());
      auto [resolve_ec, results] = co_await resolver.async_resolve(
          server.endpoint.host, std::to_string(server.endpoint.port), kNoThrow);
      if (resolve_ec || results.empty()) co_return nullptr;
      server.address = results.begin()->endpoint();
    }
  }
  auto conn = std::make_unique<UpstreamConnection>(client_.get_executor());
  upstream_io_ = &conn->socket;
  upstream_watch_.expires_after(ns(timeouts_.connect));
  auto [ec] = co_await conn->socket.async_connect(*server.address, kNoThrow);
  upstream_watch_.disarm();
  upstream_io_ = nullptr;
  if (ec) co_return nullptr;
  error_code ignored;
  conn->socket.set_option(tcp::no_delay(true), ignored);
  conn->socket.non_blocking(true, ignored);
  co_return conn;
}

ClientSession::ResponseParser& ClientSession::new_response_parser(bool head_request) {
  std::optional<ResponseParser>& rp = response_;
  rp.reset();
  response_arena_.reset();
  rp.emplace(std::piecewise_construct, std::make_tuple(),
             std::make_tuple(ArenaAllocator<char>(response_arena_)));
  rp->header_limit(kMaxHeaderBytes);
  rp->body_limit(boost::none);
  if (head_request) rp->skip(true);
  return *rp;
}

Awaitable<std::pair<error_code, std::size_t>> ClientSession::read_response_piece(
    UpstreamConnection& conn, ResponseParser& parser) {
  co_return co_await read_body_piece(conn.socket, conn.buffer, parser, body_.get(), kPieceBytes);
}

Awaitable<error_code> ClientSession::write_piece(Socket& socket, std::string_view head,
                                                 std::string_view data, bool chunked, bool last) {
  static constexpr std::string_view kCrlf = "\r\n";
  static constexpr std::string_view kLastChunk = "0\r\n\r\n";
  std::array<asio::const_buffer, 5> buffers;
  std::size_t k = 0;
  char size_line[24];
  if (!head.empty()) buffers[k++] = asio::buffer(head);
  if (!data.empty()) {
    if (chunked) {
      const auto end = fmt::format_to(size_line, "{:x}\r\n", data.size());
      buffers[k++] = asio::buffer(size_line, static_cast<std::size_t>(end - size_line));
    }
    buffers[k++] = asio::buffer(data);
    if (chunked) buffers[k++] = asio::buffer(kCrlf);
  }
  if (last) buffers[k++] = asio::buffer(kLastChunk);
  if (k == 0) co_return error_code{};
  co_return co_await write_all(socket, std::span<const asio::const_buffer>(buffers.data(), k));
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

void ClientSession::log(const Exchange& x, std::string_view client, std::string_view destination) {
  if (destination.empty()) return;
  AccessRecord r;
  r.client = client;
  if (parser_ && parser_->is_header_done()) {
    r.method = parser_->get().method_string();
    r.target = parser_->get().target();
  }
  r.status = x.status;
  r.bytes = x.bytes;
  r.upstream_ms = x.upstream_ms;
  r.decision = x.decision;
  r.dry_run_denied = x.dry_run_denied;
  worker_.access_log().write(destination, r);
}

}  // namespace sluice::server::gateway
