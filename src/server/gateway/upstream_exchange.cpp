// ClientSession (client_session.hpp), its upstream half: choosing a server, sending the request
// (head and body streamed), reading the response head, and relaying the response piece by piece.
// A try that fails before any of the response reached the client moves to another server.
#include <fmt/format.h>

#include <array>
#include <span>

#include "client_session.hpp"
#include "http_io.hpp"
#include "sluice/engine/settle.hpp"
#include "worker.hpp"

namespace sluice::server::gateway {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

// How the request's body is delimited as the client sent it; each hop keeps that framing.
template <class Parser>
void read_framing(const Parser& p, Framing& framing, std::uint64_t& length) {
  framing = Framing::kNone;
  length = 0;
  if (p.chunked()) {
    framing = Framing::kChunked;
  } else if (const auto cl = p.content_length()) {
    framing = Framing::kLength;
    length = *cl;
  }
}

}  // namespace

Awaitable<ClientSession::Next> ClientSession::forward(bool keep_alive) {
  RequestParser& p = *parser_;
  if (!body_) body_ = std::make_unique<char[]>(kPieceBytes);
  bodies_ = outcome_.rules().bodies;
  const ExtraFields extra = fields_;
  UpstreamPool& pool = worker_.pool();
  UpstreamState& up = pool.state(*outcome_.upstream(), outcome_.version());
  UpstreamRequest request;
  read_framing(p, request.framing, request.length);
  request.head_only = p.get().method() == http::verb::head;

  if (!p.is_done() && expects_continue(p.get())) {
    client_watch_.expires_after(ns(timeouts_.idle));
    const error_code ec = co_await write_all(client_, "HTTP/1.1 100 Continue\r\n\r\n");
    client_watch_.disarm();
    if (ec) co_return Next::kClose;
  }
  // What is read of the body before an upstream is chosen goes out first, its memory part in
  // one write with the head.
  const bool buffering = outcome_.route()->request_buffering;
  if (!p.is_done()) {
    if (const error_code ec =
            co_await read_body_ahead(plan_body(buffering, bodies_, kPieceBytes))) {
      co_return co_await client_body_error(ec);
    }
  }
  // Still in hand whole: it can be sent again on another connection. A buffered body goes with
  // its length, as nginx sends one, whether the client sent it chunked or not.
  request.whole = p.is_done();
  if (request.whole && buffering && request.framing != Framing::kNone) {
    request.framing = Framing::kLength;
    request.length = held_.size();
  }

  const core::Nanos start = worker_.clock().now();
  upstream_start_ = start;
  std::uint64_t tried = 0;
  std::shared_ptr<ServerState> server;
  std::unique_ptr<UpstreamConnection> conn;
  reset_response();
  bool may_reuse = true;
  int failure = 502;
  Attempt attempt;
  for (;;) {
    if (!server) {
      server = pool.pick(up, start, tried);
      if (!server) {
        breaker_end({0, failure == 504, failure != 504, false, worker_.clock().now() - start});
        note_upstream(failure, worker_.clock().now());
        co_return co_await respond_local(failure, reason_body(failure), extra, keep_alive);
      }
      may_reuse = true;
    }
    // A whole request survives a pooled connection the server has closed meanwhile (it is
    // sent again on a fresh one), so only a streamed body needs the connection checked first.
    conn = may_reuse ? pool.take_idle(*server, /*check=*/!request.whole) : nullptr;
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
    attempt = co_await send_request(*conn, *server, request);
    if (attempt.client) co_return co_await client_body_error(attempt.client);
    if (client_aborted_) co_return abandon(std::move(conn));
    if (!attempt.upstream) break;

    // Failed before any of the response reached the client.
    const bool timed_out = upstream_timed_out_;
    const bool stale = conn->reused && !timed_out && request.whole && !response_got_some();
    upstream_watch_.disarm();
    upstream_io_ = nullptr;
    conn.reset();
    reset_response();
    if (stale) {
      // A pooled connection the server had closed: not the server's fault, try a fresh one.
      may_reuse = false;
      continue;
    }
    pool.failed(up, *server, worker_.clock().now());
    failure = timed_out ? 504 : 502;
    breaker_end({0, timed_out, !timed_out, false, worker_.clock().now() - start});
    note_upstream(failure, worker_.clock().now());
    co_return co_await respond_local(failure, reason_body(failure), extra, keep_alive);
  }
  co_return co_await relay_response(up, *server, std::move(conn), attempt.got, extra, keep_alive,
                                    start);
}

ClientSession::Next ClientSession::abandon(std::unique_ptr<UpstreamConnection> conn) {
  upstream_watch_.disarm();
  upstream_io_ = nullptr;
  conn.reset();  // closed already; never pooled, and not the server's failure
  client_aborted_ = false;
  const core::Nanos now = worker_.clock().now();
  exchange_.upstream_ms = static_cast<double>(now - upstream_start_) / 1e6;
  // For the route's adaptive limit a loss: the upstream did not answer within the client's
  // patience (at overload clients leave at their deadline; ignoring them blinds the limit).
  note_upstream(504, now);
  worker_.stats().client_aborts.add();
  return Next::kClose;
}

Awaitable<ClientSession::Attempt> ClientSession::send_request(UpstreamConnection& conn,
                                                              const ServerState& server,
                                                              const UpstreamRequest& request) {
  RequestParser& p = *parser_;
  const bool chunked = request.framing == Framing::kChunked;
  upstream_io_ = &conn.socket;
  upstream_timed_out_ = false;
  head_.clear();
  append_upstream_request_head(head_, p.get(), target_.parts, peer_, forwarded_node_,
                               request.framing, request.length, server.authority, request_id_);
  upstream_watch_.expires_after(ns(timeouts_.upstream));
  Attempt a;
  // Chunked and whole: a streamed body that came in one read, all of it in memory.
  a.upstream =
      co_await write_piece(conn.socket, head_, held_.memory(), chunked, request.whole && chunked);
  if (!a.upstream) a.upstream = co_await send_held_rest(conn.socket, chunked);
  while (!a.upstream && !p.is_done()) {
    auto [read_ec, n] = co_await read_request_piece();
    if (read_ec) {
      upstream_watch_.disarm();
      upstream_io_ = nullptr;
      a.client = read_ec;
      co_return a;
    }
    upstream_watch_.expires_after(ns(timeouts_.upstream));
    a.upstream =
        co_await write_piece(conn.socket, {}, {body_.get(), n}, chunked, p.is_done() && chunked);
  }
  if (a.upstream) co_return a;
  upstream_watch_.expires_after(ns(timeouts_.upstream));
  // The request is all sent: until its answer begins, a client that leaves closes this
  // connection (the wait is where an overloaded upstream's queue time goes).
  abort_watch_.start();
  a.upstream = co_await read_response_head(conn, request.head_only);
  abort_watch_.stop();
  if (!a.upstream) std::tie(a.upstream, a.got) = co_await read_response_piece(conn);
  co_return a;
}

Awaitable<error_code> ClientSession::send_held_rest(Socket& socket, bool chunked) {
  for (std::uint64_t at = 0; at < held_.file_size();) {
    const std::ptrdiff_t n = held_.read_file(at, body_.get(), kPieceBytes);
    if (n <= 0) co_return make_error_code(boost::system::errc::io_error);
    const auto got = static_cast<std::size_t>(n);
    upstream_watch_.expires_after(ns(timeouts_.upstream));
    if (auto ec = co_await write_piece(socket, {}, {body_.get(), got}, chunked, false)) {
      co_return ec;
    }
    at += got;
  }
  if (held_.tail().empty()) co_return error_code{};
  upstream_watch_.expires_after(ns(timeouts_.upstream));
  co_return co_await write_piece(socket, {}, held_.tail(), chunked, false);
}

Awaitable<ClientSession::Next> ClientSession::relay_response(
    UpstreamState& up, ServerState& server, std::unique_ptr<UpstreamConnection> conn,
    std::size_t got, ExtraFields extra, bool keep_alive, core::Nanos start) {
  UpstreamPool& pool = worker_.pool();
  const auto& req = parser_->get();
  const bool head_request = req.method() == http::verb::head;
  // Relay the response: head and first piece in one write, then piece by piece.
  const proto::http::ResponseHead& res = response_head_;
  const int status = res.status;
  note_upstream(status, worker_.clock().now());
  Framing framing = Framing::kNone;
  std::uint64_t length = 0;
  if (proto::http::has_body(status, head_request)) {
    if (res.content_length) {
      framing = Framing::kLength;
      length = *res.content_length;
    } else if (req.version() >= 11) {
      framing = Framing::kChunked;
    } else {
      framing = Framing::kClose;
    }
  }
  if (framing == Framing::kClose) keep_alive = false;
  const bool chunked_down = framing == Framing::kChunked;
  head_.clear();
  std::function<bool(std::string_view)> drop;
  std::vector<std::string_view> cost_fields;
  if (engine::settles(outcome_)) {
    cost_fields = engine::cost_headers(outcome_);
    worker_.loop().settle(
        outcome_, status, [&res](std::string_view name) { return res.find(name); },
        worker_.clock().now());
    drop = [&cost_fields](std::string_view name) {
      return std::any_of(cost_fields.begin(), cost_fields.end(),
                         [&](std::string_view c) { return boost::beast::iequals(c, name); });
    };
  }
  append_relayed_response_head(head_, res, extra, framing, length, keep_alive, req.version(),
                               /*drop_request_id=*/!request_id_.empty(), drop);
  exchange_.status = status;
  bool done = response_done();
  stale_copy_.start(res, breaker_.keep_limit(), drop);
  stale_copy_.add({body_.get(), got});
  client_watch_.expires_after(ns(timeouts_.idle));
  error_code ec =
      co_await write_piece(client_, head_, {body_.get(), got}, chunked_down, done && chunked_down);
  exchange_.bytes += got;
  bool upstream_broken = false;
  while (!ec && !done) {
    upstream_watch_.expires_after(ns(timeouts_.upstream));
    auto [read_ec, n] = co_await read_response_piece(*conn);
    if (read_ec) {
      upstream_broken = true;
      break;
    }
    done = response_done();
    stale_copy_.add({body_.get(), n});
    client_watch_.expires_after(ns(timeouts_.idle));
    ec = co_await write_piece(client_, {}, {body_.get(), n}, chunked_down, done && chunked_down);
    exchange_.bytes += n;
  }
  client_watch_.disarm();
  upstream_watch_.disarm();
  upstream_io_ = nullptr;
  const core::Nanos end = worker_.clock().now();
  exchange_.upstream_ms = static_cast<double>(end - start) / 1e6;
  breaker_end({status, false, upstream_broken, false, end - start});
  if (upstream_broken) {
    // Cut off mid-body: the client sees a truncated response and a closed connection.
    pool.failed(up, server, end);
    co_return Next::kClose;
  }
  if (done) keep_stale(status, end);
  up.stats->observe(end - start);
  pool.succeeded(server);
  if (ec) co_return Next::kClose;  // the client left; the upstream connection is dropped
  if (res.keep_alive && conn->buffer.size() == 0) {
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
  edge::want_queue_length(conn->socket);
  conn->socket.non_blocking(true, ignored);
  co_return conn;
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

}  // namespace sluice::server::gateway
