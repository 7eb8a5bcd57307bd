// The gateway's HTTP socket I/O: reading a head, or the next piece of a body, through a Beast
// parser; writing buffers. Beast's http::async_read stacks three composed operations per read
// and posts its completion even when the buffer already held what it needed; these take one
// asio operation per socket read and none when the buffer suffices. A body piece returns as soon
// as any body bytes are in, so a trickling stream is relayed as it comes rather than in 16 KiB
// batches. Reads go through edge::async_read_some: after one that empties the socket the next
// waits for epoll's event instead of trying recv first. Writes are tried at once without
// blocking (a socket buffer almost always takes a response whole) and fall back to async_write
// for the rest.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include "edge_read.hpp"
#include "loop_types.hpp"

namespace sluice::server::gateway {

namespace http_io {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using boost::system::error_code;

// One socket read into `buffer`, up to 64 KiB; end of stream is asio::error::eof.
inline Awaitable<error_code> fill_raw(Socket& socket, beast::flat_buffer& buffer) {
  const std::size_t size = beast::read_size(buffer, 65536);
  if (size == 0) co_return http::error::buffer_overflow;
  auto [ec, n] = co_await edge::async_read_some(socket, buffer.prepare(size), kNoThrow);
  buffer.commit(n);
  co_return ec;
}

// One socket read into `buffer`. End of stream: the parser is told (an EOF-delimited body
// ends there), or http::error::end_of_stream when the message had not begun.
// (Not through fill_raw: a coroutine frame more for each read of every request.)
template <class Parser>
Awaitable<error_code> fill(Socket& socket, beast::flat_buffer& buffer, Parser& parser) {
  const std::size_t size = beast::read_size(buffer, 65536);
  if (size == 0) co_return http::error::buffer_overflow;
  auto [ec, n] = co_await edge::async_read_some(socket, buffer.prepare(size), kNoThrow);
  buffer.commit(n);
  if (ec == asio::error::eof) {
    if (!parser.got_some()) co_return http::error::end_of_stream;
    error_code eof_ec;
    parser.put_eof(eof_ec);  // done, or partial_message
    co_return eof_ec;
  }
  co_return ec;
}

}  // namespace http_io

// Looks at nothing: read_head's default.
struct NoHeadScan {
  boost::system::error_code scan(std::string_view) { return {}; }
  void consumed(std::size_t) {}
};

// A parser's complaint about the bytes (as opposed to the socket's: the peer left, a timeout).
inline bool is_parse_error(const boost::system::error_code& ec) {
  return ec.category() == make_error_code(boost::beast::http::error::bad_target).category();
}

// Reads until the parser has the whole head (the body is left in `buffer`). `scanner` sees the
// raw bytes before the parser does (HeadScanner, request_framing.hpp); its error ends the read.
template <class Parser, class Scanner = NoHeadScan>
Awaitable<boost::system::error_code> read_head(Socket& socket, boost::beast::flat_buffer& buffer,
                                               Parser& parser, Scanner&& scanner = {}) {
  namespace http = boost::beast::http;
  for (;;) {
    if (parser.is_header_done()) co_return boost::system::error_code{};
    if (buffer.size() > 0) {
      const auto bytes = buffer.data();
      if (auto ec = scanner.scan({static_cast<const char*>(bytes.data()), bytes.size()})) {
        co_return ec;
      }
      boost::system::error_code ec;
      const std::size_t used = parser.put(bytes, ec);
      buffer.consume(used);
      scanner.consumed(used);
      if (!ec && used > 0) continue;
      if (ec && ec != http::error::need_more) co_return ec;
    }
    if (auto ec = co_await http_io::fill(socket, buffer, parser)) co_return ec;
  }
}

// Reads the next piece of the body into data[0, size): returns the bytes put there, at least
// one unless the message is done (a message without a body is done at once).
template <class Parser>
Awaitable<std::pair<boost::system::error_code, std::size_t>> read_body_piece(
    Socket& socket, boost::beast::flat_buffer& buffer, Parser& parser, char* data,
    std::size_t size) {
  namespace http = boost::beast::http;
  auto& body = parser.get().body();
  body.data = data;
  body.size = size;
  const auto produced = [&] { return size - body.size; };
  for (;;) {
    if (parser.is_done() || produced() > 0) break;
    if (buffer.size() > 0) {
      boost::system::error_code ec;
      const std::size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::need_buffer) break;
      if (!ec && used > 0) continue;
      if (ec && ec != http::error::need_more) co_return std::pair{ec, produced()};
    }
    if (auto ec = co_await http_io::fill(socket, buffer, parser)) {
      co_return std::pair{ec, produced()};
    }
  }
  co_return std::pair{boost::system::error_code{}, produced()};
}

// Writes every byte of `buffers`: at once if the socket takes them (it must be in non-blocking
// mode), else the rest asynchronously.
inline Awaitable<boost::system::error_code> write_all(
    Socket& socket, std::span<const boost::asio::const_buffer> buffers) {
  namespace asio = boost::asio;
  const std::size_t total = asio::buffer_size(buffers);
  boost::system::error_code ec;
  const std::size_t n = total == 0 ? 0 : socket.write_some(buffers, ec);
  if (!ec && n == total) co_return ec;
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) co_return ec;
  boost::beast::buffers_suffix<std::span<const asio::const_buffer>> rest(buffers);
  rest.consume(n);
  auto [write_ec, written] = co_await asio::async_write(socket, rest, kNoThrow);
  co_return write_ec;
}

inline Awaitable<boost::system::error_code> write_all(Socket& socket, std::string_view bytes) {
  const boost::asio::const_buffer one = boost::asio::buffer(bytes);
  co_return co_await write_all(socket, std::span<const boost::asio::const_buffer>(&one, 1));
}

}  // namespace sluice::server::gateway
