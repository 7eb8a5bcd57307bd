// Socket reads that wait for epoll's next edge once the socket is known to be empty, as nginx
// does, instead of asking the kernel first and getting EAGAIN (one wasted syscall a request).
//
// Asio 1.81's epoll reactor (boost/asio/detail/impl/epoll_reactor.ipp) keeps, per socket and
// direction, a flag try_speculative_: set on every epoll event for the socket (perform_io), and
// cleared only when an operation's perform() answers done_and_exhausted, which its recv op does
// only for a 0-byte read. While the flag is set, start_op tries a new read at once; while it is
// clear, the read is queued for the next event without a syscall. So on a keep-alive connection
// the read for the next request is tried right after the last one, and returns EAGAIN.
//
// The reads here are Asio's recv op with one change: recvmsg with TCP_INQ (set per socket by
// want_queue_length) reports how many bytes are still queued after the read, and non-zero once
// the peer's FIN has arrived (tcp_inq_hint: "After receiving a FIN, tell the user-space to
// continue reading by returning a non-zero inq"). A read that leaves 0 answers
// done_and_exhausted, so the reactor clears the flag, exactly where Asio's send op clears it
// after a short write. Why no wake-up is lost:
//  - the flag is cleared by start_op or perform_io right after our perform(), in the same call,
//    and epoll_wait runs only in the reactor task on the loop's one thread (and where Asio's
//    locks are on, the clear is under the descriptor's mutex): no epoll event for this socket
//    can be processed between the kernel's "0 left" and the clear;
//  - a byte or FIN that arrives after that instant makes the receive queue go from empty to not,
//    which wakes the socket's waiters: epoll puts the socket on its ready list, and a later
//    epoll_wait (the reactor's next run) returns it;
//  - that event runs perform_io, which sets the flag again and performs the queued read, if
//    one is queued; if none is (the session was busy elsewhere meanwhile: writing, at the
//    upstream, in a Redis call), the flag is set and the next read is tried at once, as Asio
//    does now. Whatever suspends between reads, the flag is clear only when no event came
//    since the socket was seen empty, so a read queued without trying waits for an event that
//    is still to come.
// What is noticed later than before: a reset (RST) that arrives before a read that empties the
// queue sets no FIN, so inq is 0 and the reset's event has already been taken; the session sees
// it at its next write or at its watchdog's deadline rather than at once (it never waits on a
// client that still wants an answer: a reset client wants none).
//
// async_wait_readable is the same for a wait: it peeks (MSG_PEEK) only where the flag says an event
// came since the socket was empty, and is queued without epoll_ctl. (Asio's async_wait re-arms
// with EPOLL_CTL_MOD each time it is queued: a syscall as dear as the EAGAIN.)
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/detail/bind_handler.hpp>
#include <boost/asio/detail/fenced_block.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_cont_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/memory.hpp>
#include <boost/asio/detail/reactive_socket_service_base.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/error.hpp>
#include <cerrno>
#include <cstring>

#include "loop_types.hpp"

#if !defined(BOOST_ASIO_HAS_EPOLL) || defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#error "edge_read.hpp drives Asio's epoll reactor; this build uses another"
#endif

namespace sluice::server::gateway::edge {

namespace detail {

namespace ad = boost::asio::detail;
using boost::system::error_code;

// basic_socket keeps its implementation protected; a pointer to that member, formed in a
// derived class, reaches it in any socket. (The socket's state and its service.)
struct SocketInternals : Socket {
  struct Parts {
    ad::reactive_socket_service_base::base_implementation_type& impl;
    ad::reactive_socket_service_base& service;
  };
  static Parts of(Socket& s) {
    auto& io = s.*&SocketInternals::impl_;
    return {io.get_implementation(), io.get_service()};
  }
};

// One recvmsg into `b`: done_and_exhausted when TCP_INQ says it left nothing (no byte, no FIN)
// in the socket, so that the next read waits for an event; done when something is left or the
// socket does not say (no TCP_INQ on it: Asio's own behaviour).
inline ad::reactor_op::status receive(int fd, boost::asio::mutable_buffer b, error_code& ec,
                                      std::size_t& n) {
  iovec iov{b.data(), b.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t got;
  do {
    got = ::recvmsg(fd, &msg, 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ad::reactor_op::not_done;
    ec.assign(errno, boost::asio::error::get_system_category());
    n = 0;
    return ad::reactor_op::done;
  }
  n = static_cast<std::size_t>(got);
  if (got == 0) {
    ec = boost::asio::error::eof;
    return ad::reactor_op::done_and_exhausted;  // as Asio's recv op
  }
  int inq = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_TCP && c->cmsg_type == TCP_CM_INQ) {
      std::memcpy(&inq, CMSG_DATA(c), sizeof inq);
    }
  }
  return inq == 0 ? ad::reactor_op::done_and_exhausted : ad::reactor_op::done;
}

// A peek: done when a byte (n = 1), the end of the stream or an error is there, else not yet.
inline ad::reactor_op::status peek(int fd, boost::asio::mutable_buffer, error_code& ec,
                                   std::size_t& n) {
  char byte;
  ssize_t got;
  do {
    got = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ad::reactor_op::not_done;
    ec.assign(errno, boost::asio::error::get_system_category());
    return ad::reactor_op::done;
  }
  n = static_cast<std::size_t>(got);
  if (got == 0) ec = boost::asio::error::eof;
  return ad::reactor_op::done;  // the bytes (or the end) are still there: the flag stays
}

using Action = ad::reactor_op::status (*)(int, boost::asio::mutable_buffer, error_code&,
                                          std::size_t&);

// Asio's reactive_socket_recv_op (reactive_socket_recv_op.hpp), its perform() made `action`.
template <Action action, class Handler, class IoExecutor>
class Op : public ad::reactor_op {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(Op);

  Op(int fd, boost::asio::mutable_buffer buffer, Handler& handler, const IoExecutor& io_ex)
      : reactor_op(error_code(), &Op::do_perform, &Op::do_complete),
        fd_(fd),
        buffer_(buffer),
        handler_(static_cast<Handler&&>(handler)),
        work_(handler_, io_ex) {}

  static status do_perform(reactor_op* base) {
    Op* o = static_cast<Op*>(base);
    return action(o->fd_, o->buffer_, o->ec_, o->bytes_transferred_);
  }

  static void do_complete(void* owner, ad::operation* base, const error_code&, std::size_t) {
    Op* o = static_cast<Op*>(base);
    ptr p = {ad::addressof(o->handler_), o, o};
    ad::handler_work<Handler, IoExecutor> w(
        static_cast<ad::handler_work<Handler, IoExecutor>&&>(o->work_));
    // A copy of the handler, so that the op's memory is freed before the upcall.
    ad::binder2<Handler, error_code, std::size_t> handler(o->handler_, o->ec_,
                                                          o->bytes_transferred_);
    p.h = ad::addressof(handler.handler_);
    p.reset();
    if (owner) {
      ad::fenced_block b(ad::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

 private:
  int fd_;
  boost::asio::mutable_buffer buffer_;
  Handler handler_;
  ad::handler_work<Handler, IoExecutor> work_;
};

// The socket service's protected start_op (the non-blocking mode, then the reactor's
// start_op) and its cancellation type, reached as SocketInternals reaches the implementation.
struct ServiceInternals : ad::reactive_socket_service_base {
  using Cancellation = reactor_op_cancellation;
  static constexpr auto start = &ServiceInternals::start_op;
};

template <Action action>
struct Initiation {
  Socket* socket;

  using executor_type = Executor;
  executor_type get_executor() const noexcept { return socket->get_executor(); }

  // As reactive_socket_service_base::async_receive, with Op for its recv op.
  template <class Handler>
  void operator()(Handler&& h, boost::asio::mutable_buffer buffer) const {
    using H = std::decay_t<Handler>;
    using O = Op<action, H, Executor>;
    H handler(static_cast<Handler&&>(h));
    auto [impl, service] = SocketInternals::of(*socket);
    const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(handler);
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    typename O::ptr p = {ad::addressof(handler), O::ptr::allocate(handler), nullptr};
    p.p = new (p.v) O(impl.socket_, buffer, handler, socket->get_executor());
    if (slot.is_connected()) {
      auto& reactor = boost::asio::use_service<ad::reactor>(socket->get_executor().context());
      p.p->cancellation_key_ = &slot.template emplace<ServiceInternals::Cancellation>(
          &reactor, &impl.reactor_data_, impl.socket_, ad::reactor::read_op);
    }
    (service.*ServiceInternals::start)(impl, ad::reactor::read_op, p.p, is_continuation,
                                       /*is_non_blocking: may be tried at once=*/true,
                                       /*noop=*/false);
    p.v = p.p = nullptr;
  }
};

}  // namespace detail

// TCP_INQ on `socket`, so that its reads can tell an emptied socket (one setsockopt per
// connection). Without it (or where the kernel lacks it) the reads behave as Asio's.
inline void want_queue_length(Socket& socket) {
  const int one = 1;
  (void)::setsockopt(socket.native_handle(), SOL_TCP, TCP_INQ, &one, sizeof one);
}

// socket.async_read_some(buffer, token), but a read that empties the socket makes the next one
// wait for epoll's next event rather than try recv first. Completes with (error_code, bytes).
template <class Token>
auto async_read_some(Socket& socket, boost::asio::mutable_buffer buffer, Token&& token) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
      detail::Initiation<&detail::receive>{&socket}, token, buffer);
}

// Completes when the socket has something to read, its end, or an error (eof or the error
// then), without consuming anything; a peek only where an epoll event came since the socket
// was last seen empty, and never an epoll_ctl. Completes with (error_code, bytes seen: 0 or 1).
template <class Token>
auto async_wait_readable(Socket& socket, Token&& token) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
      detail::Initiation<&detail::peek>{&socket}, token, boost::asio::mutable_buffer());
}

}  // namespace sluice::server::gateway::edge
