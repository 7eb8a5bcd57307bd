// One admin HTTP/1.1 connection: reads requests (keep-alive), hands each to the router and
// writes the reply. Bodies are capped (413), header blocks too (431), and so is the time to send
// each (the connection is closed); a malformed request gets 400 and the connection is closed,
// since its framing can no longer be trusted.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <memory>

namespace sluice::server {

class AdminService;
struct ListenerInfo;
struct Reply;

inline constexpr std::size_t kAdminBodyLimit = 1u << 20;  // a config of ~10k rules
inline constexpr std::size_t kAdminHeaderLimit = 16u << 10;
// From a request's first byte to the end of its head, and from there to the end of its body:
// an admin client is a script on a fast link, and 1 MiB in 10 s is 100 KiB/s.
inline constexpr std::chrono::seconds kAdminHeaderTimeout{10};
inline constexpr std::chrono::seconds kAdminBodyTimeout{10};
inline constexpr std::chrono::seconds kAdminIdleTimeout{60};  // between keep-alive requests
// Connections one listener holds at once; one more gets 503 and is closed. The cap keeps a
// flood of connections to the admin port from taking the descriptors the gateway needs; the
// check listener's is higher, as services keep pools of connections to it.
inline constexpr std::size_t kMaxAdminConnections = 256;
inline constexpr std::size_t kMaxCheckConnections = 1024;

class AdminSession : public std::enable_shared_from_this<AdminSession> {
 public:
  // `socket` must be bound to a strand: the session's steps and close() run on it. `listener`
  // is the one it was accepted on (which routes it serves, which checks its requests pass).
  AdminSession(boost::asio::ip::tcp::socket socket, std::shared_ptr<AdminService> service,
               std::shared_ptr<const ListenerInfo> listener);

  void start();

  // Closes the connection once the reply in progress, if any, is written. Thread-safe.
  void close();

 private:
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  boost::asio::awaitable<void> run();
  // One request's head and body, each under its deadline (after an idle wait for its start).
  boost::asio::awaitable<boost::beast::error_code> read_request(boost::beast::flat_buffer& buffer,
                                                                Parser& parser);
  // The reply itself, or what its `later` produces (from Redis, or the config worker).
  boost::asio::awaitable<Reply> settle(Reply reply);
  boost::asio::awaitable<void> linger();

  boost::beast::tcp_stream stream_;
  std::shared_ptr<AdminService> service_;
  std::shared_ptr<const ListenerInfo> listener_;
  bool busy_ = false;     // a request is being answered
  bool closing_ = false;  // close() was called
};

}  // namespace sluice::server
