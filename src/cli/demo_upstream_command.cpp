// The demo upstream (demo_upstream_command.hpp): one loop, one canned answer.
#include "demo_upstream_command.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <csignal>
#include <string_view>

#include "sluice/config/loader.hpp"

namespace sluice::cli {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kKeepAlive =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\r\n"
    "hello from upstream\n";
constexpr std::string_view kKeepAlive10 =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n"
    "Connection: keep-alive\r\n\r\nhello from upstream\n";
constexpr std::string_view kClose =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n"
    "Connection: close\r\n\r\nhello from upstream\n";

asio::awaitable<void> serve(tcp::socket socket) {
  boost::beast::flat_buffer buffer;
  char sink[16384];
  for (;;) {
    http::request_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    for (;;) {
      parser.get().body().data = sink;
      parser.get().body().size = sizeof sink;
      auto [ec, n] = co_await http::async_read(socket, buffer, parser, kNoThrow);
      if (ec == http::error::need_buffer) continue;
      if (ec) co_return;
      break;
    }
    const bool keep_alive = parser.keep_alive();
    const std::string_view reply = !keep_alive                   ? kClose
                                   : parser.get().version() < 11 ? kKeepAlive10
                                                                 : kKeepAlive;
    auto [ec, n] = co_await asio::async_write(socket, asio::buffer(reply), kNoThrow);
    if (ec || !keep_alive) co_return;
  }
}

asio::awaitable<void> accept(tcp::acceptor& acceptor) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (ec) {
      if (!acceptor.is_open()) co_return;
      continue;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(acceptor.get_executor(), serve(std::move(socket)), asio::detached);
  }
}

int serve(const config::Endpoint& listen, std::FILE* err) {
  std::signal(SIGPIPE, SIG_IGN);
  asio::io_context io(1);
  tcp::acceptor acceptor(io);
  try {
    tcp::endpoint ep;
    if (listen.host.empty()) {
      ep = tcp::endpoint(tcp::v4(), listen.port);
    } else {
      tcp::resolver resolver(io);
      ep = resolver.resolve(listen.host, std::to_string(listen.port))->endpoint();
    }
    acceptor.open(ep.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& e) {
    std::fprintf(err, "sluice demo-upstream: cannot listen on %s: %s\n",
                 config::format_endpoint(listen).c_str(), e.code().message().c_str());
    return 1;
  }
  const auto bound = acceptor.local_endpoint();
  std::fprintf(err, "sluice demo-upstream: listening on %s\n",
               config::format_endpoint({bound.address().to_string(), bound.port()}).c_str());
  std::fflush(err);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
  asio::co_spawn(io, accept(acceptor), asio::detached);
  io.run();
  return 0;
}

}  // namespace

int run_demo_upstream(const std::string& listen, std::FILE* err) {
  auto ep = config::parse_endpoint(listen);
  if (!ep) {
    std::fprintf(err, "sluice demo-upstream: --listen: %s\n", ep.error().c_str());
    return 2;
  }
  return serve(*ep, err);
}

}  // namespace sluice::cli
