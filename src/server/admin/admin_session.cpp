// The admin connection loop (admin_session.hpp), as a coroutine on the session's strand.
#include "admin_session.hpp"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "admin_router.hpp"
#include "admin_service.hpp"
#include "sluice/support/shared_handler.hpp"

namespace sluice::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr auto kWriteTimeout = std::chrono::seconds(30);
constexpr auto kLingerTimeout = std::chrono::seconds(2);
constexpr std::size_t kFirstRead = 4096;
constexpr std::size_t kLingerBytes = 8 * kAdminBodyLimit;
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

// The reply to a request that could not be read, or nothing when the peer just went away.
std::optional<Reply> read_failure_reply(const beast::error_code& ec) {
  if (ec == http::error::header_limit) {
    return error_reply(431, "request header fields too large (limit " +
                                std::to_string(kAdminHeaderLimit) + " bytes)");
  }
  if (ec == http::error::body_limit) {
    return error_reply(
        413, "request body too large (limit " + std::to_string(kAdminBodyLimit) + " bytes)",
        "body");
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return std::nullopt;
  if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
    return error_reply(400, "malformed HTTP request: " + ec.message());
  }
  return std::nullopt;  // eof, reset, timeout, cancelled
}

http::response<http::string_body> to_response(Reply reply, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(reply.status), version};
  res.set(http::field::server, "sluice");
  if (!reply.content_type.empty()) res.set(http::field::content_type, reply.content_type);
  for (auto& [name, value] : reply.headers) res.set(name, value);
  res.body() = std::move(reply.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  if (reply.status == 204) res.erase(http::field::content_length);  // RFC 9110 15.3.5
  return res;
}

// The request as the router sees it; its views point into `req`.
AdminRequest request_of(const http::request<http::string_body>& req, const ListenerInfo* listener) {
  const std::string_view target(req.target().data(), req.target().size());
  const auto question = target.find('?');
  AdminRequest request;
  request.method = req.method();
  request.path = target.substr(0, question);
  if (question != std::string_view::npos) request.query = target.substr(question + 1);
  request.body = req.body();
  request.listener = listener;
  request.version = req.version();
  if (auto host = req.find(http::field::host); host != req.end()) {
    request.host = std::string_view(host->value().data(), host->value().size());
    request.repeated_host = req.count(http::field::host) > 1;
  }
  const auto auth = req[http::field::authorization];
  request.authorization = std::string_view(auth.data(), auth.size());
  return request;
}

}  // namespace

AdminSession::AdminSession(asio::ip::tcp::socket socket, std::shared_ptr<AdminService> service,
                           std::shared_ptr<const ListenerInfo> listener)
    : stream_(std::move(socket)), service_(std::move(service)), listener_(std::move(listener)) {}

void AdminSession::start() {
  asio::co_spawn(
      stream_.get_executor(), [self = shared_from_this()] { return self->run(); }, asio::detached);
}

void AdminSession::close() {
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->closing_ = true;
    if (!self->busy_) {
      beast::error_code ignored;
      self->stream_.socket().close(ignored);
    }
  });
}

asio::awaitable<beast::error_code> AdminSession::read_request(beast::flat_buffer& buffer,
                                                              Parser& parser) {
  // Idle until a request starts; from its first byte, the head and then the body each have a
  // deadline of their own, so a client that trickles bytes (slowloris) is cut off.
  beast::error_code ec;
  std::size_t n = 0;
  if (buffer.size() == 0) {
    stream_.expires_after(kAdminIdleTimeout);
    std::tie(ec, n) = co_await stream_.async_read_some(buffer.prepare(kFirstRead), kAwait);
    if (ec) co_return ec;
    buffer.commit(n);
  }
  stream_.expires_after(kAdminHeaderTimeout);
  std::tie(ec, n) = co_await http::async_read_header(stream_, buffer, parser, kAwait);
  if (ec) co_return ec;
  const auto length = parser.content_length();
  if (length && *length > kAdminBodyLimit) co_return http::error::body_limit;  // unread
  if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
    http::response<http::empty_body> cont{http::status::continue_, parser.get().version()};
    std::tie(ec, n) = co_await http::async_write(stream_, cont, kAwait);
    if (ec) co_return ec;
  }
  stream_.expires_after(kAdminBodyTimeout);
  std::tie(ec, n) = co_await http::async_read(stream_, buffer, parser, kAwait);
  co_return ec;
}

asio::awaitable<Reply> AdminSession::settle(Reply reply) {
  // An answer may itself need more I/O (a shared override: checked on the config worker, then
  // written to Redis on this loop): each `later` in turn.
  while (reply.later) {
    auto later = std::move(reply.later);
    reply.later = nullptr;
    // The answer may come from another thread (the config worker): resume on our strand.
    // The initiation is a named object, never a temporary inside the co_await: g++ 12 destroys
    // such a lambda's captures twice (asio issue #1007), here the strand's reference count,
    // which freed the strand under the session's next timer (found by the ASan run).
    auto initiation = [&later, strand = stream_.get_executor()](auto handler) {
      later([done = support::shared_handler(std::move(handler)), strand](Reply r) {
        asio::post(strand, [done, r = std::move(r)]() mutable { done(std::move(r)); });
      });
    };
    reply = co_await asio::async_initiate<decltype(asio::use_awaitable), void(Reply)>(
        initiation, asio::use_awaitable);
  }
  co_return reply;
}

asio::awaitable<void> AdminSession::run() {
  beast::flat_buffer buffer;
  beast::error_code ignored;
  while (!closing_) {
    Parser parser;
    parser.header_limit(static_cast<std::uint32_t>(kAdminHeaderLimit));
    parser.body_limit(kAdminBodyLimit);
    beast::error_code ec = co_await read_request(buffer, parser);
    std::optional<Reply> failed;
    if (ec) {
      failed = read_failure_reply(ec);
      if (!failed) break;
    }
    const unsigned version = parser.is_header_done() ? parser.get().version() : 11;
    busy_ = true;
    bool keep_alive = false;
    Reply reply;
    if (failed) {
      reply = std::move(*failed);
    } else {
      AdminRequest request = request_of(parser.get(), listener_.get());
      reply = dispatch(*service_, request);
      keep_alive = parser.get().keep_alive();
    }
    reply = co_await settle(std::move(reply));
    service_->count_reply(reply.status);
    if (reply.delay.count() > 0) {
      asio::steady_timer hold(stream_.get_executor(), reply.delay);
      std::tie(ec) = co_await hold.async_wait(kAwait);
    }
    keep_alive = keep_alive && !closing_;
    auto res = to_response(std::move(reply), version, keep_alive);
    stream_.expires_after(kWriteTimeout);
    std::size_t n = 0;
    std::tie(ec, n) = co_await http::async_write(stream_, res, kAwait);
    busy_ = false;
    if (ec) break;
    if (failed) {
      co_await linger();
      co_return;
    }
    if (!keep_alive) break;
  }
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  stream_.socket().close(ignored);
}

asio::awaitable<void> AdminSession::linger() {
  // Closing with unread request bytes makes the kernel send a reset, which can destroy the
  // error reply before the client reads it; so read and drop what is still coming, briefly
  // (nginx's lingering_close).
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  std::array<char, 16384> sink;
  std::size_t drained = 0;
  stream_.expires_after(kLingerTimeout);
  while (drained < kLingerBytes) {
    auto [ec, n] = co_await stream_.async_read_some(asio::buffer(sink), kAwait);
    if (ec) break;
    drained += n;
  }
  stream_.socket().close(ignored);
}

}  // namespace sluice::server
