// What a listener does when it has no room: a connection over its cap is told so and closed
// (refuse_connection), and an accept() that fails for want of descriptors or memory is retried
// after a pause rather than at once, which would spin on the same error. The gateway, admin
// and RESP listeners all follow it.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <string_view>

namespace sluice::server {

// The wait before accepting again after EMFILE, ENFILE, ENOBUFS or ENOMEM: connections that
// close meanwhile make room.
inline constexpr std::chrono::milliseconds kAcceptPause{50};

// An accept() error that concerns one connection only (it was reset while queued): the next
// one may be accepted at once. Any other error waits kAcceptPause.
inline bool accept_again_at_once(const boost::system::error_code& ec) {
  return ec == boost::asio::error::connection_aborted;
}

// Best effort: a socket just accepted has an empty send buffer, so a short answer (a 503,
// Redis's "-ERR max number of clients reached") fits; a client that cannot take it gets the
// close alone.
template <class Socket>
void refuse_connection(Socket& socket, std::string_view answer) {
  boost::system::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(boost::asio::buffer(answer.data(), answer.size()), ignored);
  socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace sluice::server
