// One client connection to the gateway: reads requests (keep-alive), asks the engine about each
// and acts on the Verdict: forward (after its delay) to an upstream server with the body
// streamed both ways, or answer locally (reject, respond, no route). Malformed heads (and
// targets or hosts that cannot be normalized, or framing another reader could take otherwise)
// get 400, an unknown transfer coding 501, an oversized head 431, a long target 414, a body
// over http.max_body_size 413, one that misses its pace 408, and the connection is closed.
// A body is buffered before an upstream is taken (memory, then a temporary file), unless the
// route streams it (request_buffering: off) or it is longer than http.max_buffered_body.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "body_buffer.hpp"
#include "client_abort_watch.hpp"
#include "common/limit_fields.hpp"
#include "loop_types.hpp"
#include "proxy_head.hpp"
#include "repeated_answer.hpp"
#include "request_body.hpp"
#include "request_framing.hpp"
#include "request_head.hpp"
#include "sluice/engine/breaker_call.hpp"
#include "sluice/engine/loop.hpp"
#include "stale_copy.hpp"
#include "upstream_pool.hpp"
#include "watchdog.hpp"

namespace sluice::server::gateway {

class Worker;

// Limits on what a client may send before the gateway gives up on the request.
inline constexpr std::size_t kMaxHeaderBytes = 32u << 10;  // request line and fields: 431
inline constexpr std::size_t kMaxTargetBytes = 8u << 10;   // the request target: 414
inline constexpr std::size_t kPieceBytes = 16u << 10;      // one body read, either direction
inline constexpr std::uint64_t kDrainBytes = 64u << 10;    // unread body skipped to keep alive

class ClientSession : public std::enable_shared_from_this<ClientSession> {
 public:
  ClientSession(Worker& worker, Socket socket);
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  Awaitable<void> run();

  // Shutdown: closes the connection if it waits for a request; otherwise the request in
  // progress is answered first (run() sees Worker::draining() after it).
  void close_if_idle();

 private:
  enum class Next { kKeepAlive, kClose };
  using RequestParser =
      boost::beast::http::request_parser<boost::beast::http::buffer_body, ArenaAllocator<char>>;
  using ResponseParser =
      boost::beast::http::response_parser<boost::beast::http::buffer_body, ArenaAllocator<char>>;

  // What the access log line and the counters say about the request being served.
  struct Exchange {
    int status = 0;
    std::uint64_t bytes = 0;
    double upstream_ms = -1;
    std::string_view decision;
    // What the upstream did, and when (the loop's clock), for the route's adaptive limit.
    engine::UpstreamResult upstream = engine::UpstreamResult::kNone;
    core::Nanos upstream_end = 0;
  };
  // The upstream answered `status` (or failed with it, 502/504 made here) at `now`.
  void note_upstream(int status, core::Nanos now) {
    exchange_.upstream =
        status >= 500 ? engine::UpstreamResult::kFailed : engine::UpstreamResult::kAnswered;
    exchange_.upstream_end = now;
  }

  // Reads one request, asks the engine, acts on the outcome and logs the exchange.
  Awaitable<Next> serve_one();
  // A fresh request parser in parser_ (its fields in request_arena_), the exchange's state
  // reset and the client watchdog armed for the next head.
  RequestParser& new_request_parser();
  // The outcome's rate-limit fields into fields_, in the forms its snapshot's rules ask for.
  void write_limit_fields();
  // After the response: the dry-run warning, counters, the access log line, the permits back.
  void finish_exchange(core::Nanos now);
  // Answers a request head that cannot be served (400, 413, 414, 431, 501) and closes; 0: just
  // close.
  Awaitable<Next> refuse_head(int status);
  // Writes the gateway's own error answer; the connection is to close (after linger_close).
  Awaitable<void> answer_error(int status);
  Awaitable<Next> client_body_error(const boost::system::error_code& ec);
  // `typed`: `extra` holds the Content-Type (else a text body is text/plain).
  Awaitable<Next> respond_local(int status, std::string_view body, ExtraFields extra,
                                bool keep_alive, bool typed = false);
  // The route's breaker (breaker_exchange.cpp): asked before forward(), which it calls unless
  // the breaker is open; then the fallback answers. breaker_end reports how the exchange ended
  // (and logs a change of mode); keep_stale hands a good response's copy to the stale cache.
  Awaitable<Next> call_upstream(bool keep_alive);
  void breaker_end(const engine::ExchangeEnd& end);
  void keep_stale(int status, core::Nanos now);
  // What goes upstream of a request being forwarded, besides its head.
  struct UpstreamRequest {
    Framing framing = Framing::kNone;  // the client's, or Content-Length for a buffered body
    std::uint64_t length = 0;          // its Content-Length (Framing::kLength)
    bool whole = false;                // held_ has all of the body: the request can be sent again
    bool head_only = false;            // a HEAD request: the response has no body
  };
  // One try at a server. `upstream`: it failed before any of the response reached the client
  // (another try may follow); `client`: the client's body failed; neither: the response head
  // is in response_ and `got` bytes of its body in body_.
  struct Attempt {
    boost::system::error_code upstream;
    boost::system::error_code client;
    std::size_t got = 0;
  };

  // Picks a server (another after a failure that sent nothing the client saw), sends the
  // request and relays the response (upstream_exchange.cpp).
  Awaitable<Next> forward(bool keep_alive);
  // The client left while its request waited on the upstream: the upstream connection is
  // dropped, the abort counted, and the session ends (499 in the access log).
  Next abandon(std::unique_ptr<UpstreamConnection> conn);
  // The client left while its request waited in the route's adaptive queue: never forwarded,
  // its place given back, the abort counted, the session ended (499).
  Next abandon_queued(core::Nanos now);
  Awaitable<Attempt> send_request(UpstreamConnection& conn, const ServerState& server,
                                  const UpstreamRequest& request);
  // Relays the response whose head is in response_head_ (and `got` bytes of its body, in
  // body_), piece by piece, then pools the upstream connection if it can carry another request.
  Awaitable<Next> relay_response(UpstreamState& up, ServerState& server,
                                 std::unique_ptr<UpstreamConnection> conn, std::size_t got,
                                 ExtraFields extra, bool keep_alive, core::Nanos start);
  Awaitable<std::unique_ptr<UpstreamConnection>> connect(ServerState& server);

  // Reads the next piece of the request body into body_, within the body's pace.
  Awaitable<std::pair<boost::system::error_code, std::size_t>> read_request_piece();
  // The same into data[0, size): at least one byte unless the body is done. A body that misses
  // its pace (timeouts.body, http.min_body_rate) sets body_timed_out_.
  Awaitable<std::pair<boost::system::error_code, std::size_t>> read_request_into(char* data,
                                                                                 std::size_t size);
  // Reads into held_ what is read of the body before an upstream connection is taken, as
  // `plan` says (request_body.hpp); a file that cannot be written ends the buffering early.
  Awaitable<boost::system::error_code> read_body_ahead(const BodyPlan& plan);
  // Sends what held_ has after its memory part (its file, then its tail), as chunks when
  // `chunked`.
  Awaitable<boost::system::error_code> send_held_rest(Socket& socket, bool chunked);
  // The upstream's response (response_read.cpp). Its head into response_head_, through the
  // hand-written scanner when it takes the head, else through Beast's parser as before (interim
  // 1xx responses skipped); the next piece of its body into body_; whether it is all read.
  Awaitable<boost::system::error_code> read_response_head(UpstreamConnection& conn,
                                                          bool head_request);
  Awaitable<std::pair<boost::system::error_code, proto::http::HeadScan>> scan_response_head(
      UpstreamConnection& conn, bool head_request);
  Awaitable<std::pair<boost::system::error_code, std::size_t>> read_response_piece(
      UpstreamConnection& conn);
  bool response_done() const;
  // Any byte of the response came (a pooled connection that fails after that is not stale).
  bool response_got_some() const;
  // No response read yet: before each try at a server.
  void reset_response();
  // A fresh response parser in response_, its fields in response_arena_.
  ResponseParser& new_response_parser(bool head_request);
  // One write: `head`, then `data` (as one chunk when `chunked`), then the last chunk when
  // `last`.
  Awaitable<boost::system::error_code> write_piece(Socket& socket, std::string_view head,
                                                   std::string_view data, bool chunked, bool last);
  // Skips a small unread request body so that the connection can carry the next request.
  Awaitable<bool> drain_request_body();
  // Half-closes, then reads what the client still sends (briefly) so that it gets the reply
  // rather than a reset.
  Awaitable<void> linger_close();

  // X-Request-Id into request_id_ (the client's, or one made) when the access log is on.
  void take_request_id(const RequestParser::value_type& req);
  // The access-log line of exchange_; `decided`: outcome_ holds the engine's answer.
  void log(std::string_view client, const config::RuleSet& rules, bool decided);

  Worker& worker_;
  Socket client_;
  boost::beast::flat_buffer client_buffer_{kMaxHeaderBytes * 2};
  // The request's fields live in request_arena_, the response's in response_arena_: each is
  // reset when its parser is replaced.
  Arena request_arena_;
  Arena response_arena_;
  std::optional<RequestParser> parser_;
  // A member, not a local of forward(): a coroutine frame over 1 KiB is never recycled by
  // Asio's per-thread cache, so it would cost a malloc per request.
  std::optional<ResponseParser> response_;
  // The response head either way: the scanner's views into response_bytes_ (a copy of the head,
  // as the connection's buffer moves on the next read), or Beast's fields' in response_fields_.
  // Made at the first response (2 KiB of field views: a connection only refused never needs it).
  std::unique_ptr<proto::http::ResponseHeadScanner> response_scan_;
  std::string response_bytes_;
  std::vector<proto::http::HeadField> response_fields_;
  proto::http::ResponseHead response_head_;
  bool response_fast_ = false;       // the scanner took the head: the body is read without Beast
  bool response_begun_ = false;      // ... and some of the response came
  std::uint64_t response_left_ = 0;  // ... and this much of its Content-Length is still to come
  HeadScanner head_scan_;
  std::string peer_;                     // the socket peer's address
  proto::http::IpAddress peer_address_;  // ... parsed once (text() empty: it did not parse)
  std::string forwarded_node_;           // for=<peer>, RFC 7239
  std::vector<engine::Header> headers_;
  engine::RequestView view_;     // the request as the engine saw it (for the log's key)
  std::string_view request_id_;  // "" (access log off), the client's id or made_request_id_
  char made_request_id_[33] = {};
  std::string log_key_;             // the access log's key column, kept to reuse its capacity
  engine::Outcome outcome_;         // the engine's answer to the request being served
  engine::BreakerCall breaker_;     // its route's breaker's part in it
  StaleCopy stale_copy_;            // the response being relayed, kept for stale answers
  LimitFields limit_fields_;        // its rate-limit fields, before they are written
  RepeatedFields repeated_fields_;  // ... as header lines, kept while they repeat
  std::string fields_;              // ... and X-Request-Id: what the response adds
  RepeatedAnswer repeated_answer_;  // the last local answer, kept while it repeats
  HeadTarget target_;               // the request's target as forwarded (read_request_head)
  std::string head_;
  std::unique_ptr<char[]> body_;  // one piece of a body, either direction
  BodyBuffer held_;               // the request body read ahead (read_body_ahead)
  BodyPace body_pace_;
  bool reading_body_ = false;    // the client watchdog guards a body read: 408, not a close
  bool body_timed_out_ = false;  // ...and it fired
  Watchdog client_watch_;
  Watchdog upstream_watch_;
  Socket* upstream_io_ = nullptr;  // what upstream_watch_ and abort_watch_ close
  bool upstream_timed_out_ = false;
  // Watches the client while its request waits for the upstream's answer: a client that leaves
  // then closes the upstream connection (client_aborted_).
  ClientAbortWatch abort_watch_;
  bool client_aborted_ = false;
  core::Nanos upstream_start_ = 0;  // when forward() began to look for a server
  bool idle_ = false;               // waiting for a request with nothing of it read
  bool first_ = true;               // no request served yet: the header timeout, not the idle one
  bool linger_ = false;  // closing with unread input: read it away first (see linger_close)
  config::Timeouts timeouts_;
  config::BodyLimits bodies_;
  proto::http::EscapedSlashes escaped_slashes_ = proto::http::EscapedSlashes::kDecode;
  Exchange exchange_;
};

}  // namespace sluice::server::gateway
