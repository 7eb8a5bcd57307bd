// Turning away a connection a listener has no room for: its one-line answer (a 503, Redis's
// "-ERR max number of clients reached") in one non-blocking write, then the close.
// Used by the admin and RESP listeners at their connection caps.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <string_view>

namespace sluice::server {

// Best effort: a socket just accepted has an empty send buffer, so a short answer fits; a
// client that cannot take it gets the close alone.
template <class Socket>
void refuse_connection(Socket& socket, std::string_view answer) {
  boost::system::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(boost::asio::buffer(answer.data(), answer.size()), ignored);
  socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace sluice::server
