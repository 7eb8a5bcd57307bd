// Notices a client that leaves (its socket's EOF or reset) while its request waits on the
// upstream, so that the wait ends at once, as nginx's default proxy_ignore_client_abort off.
// One read-readiness wait on the idle client socket and a peek: no bytes are consumed.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <functional>
#include <memory>

#include "loop_types.hpp"

namespace sluice::server::gateway {

class ClientAbortWatch {
 public:
  // What a peek at the client's socket shows.
  enum class Seen { kQuiet, kSent, kGone };

  // `on_abort` runs on the socket's executor when the client is seen gone during a watch.
  ClientAbortWatch(Socket& client, std::function<void()> on_abort)
      : client_(client), on_abort_(std::move(on_abort)) {}

  // The object whose lifetime the pending wait extends (the session owning this watch).
  void set_owner(std::weak_ptr<void> owner) { owner_ = std::move(owner); }

  // Watches until stop(). A client already gone fires at once; one that has sent more (a
  // pipelined request) cannot be told from one that waits, so it is not watched (as in nginx).
  void start() {
    watching_ = true;
    look(owner_.lock());
  }

  // Ends the watch (before the client socket is read or written again).
  void stop() {
    if (!watching_) return;
    watching_ = false;
    ++generation_;
    if (!waiting_) return;
    waiting_ = false;
    boost::system::error_code ignored;
    client_.cancel(ignored);  // nothing else is pending on the client while it is watched
  }

  static Seen peek(Socket& s) {
    char byte;
    const ssize_t n = ::recv(s.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return Seen::kSent;
    if (n == 0) return Seen::kGone;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Seen::kQuiet : Seen::kGone;
  }

 private:
  void look(std::shared_ptr<void> owner) {
    if (!owner || !watching_) return;
    switch (peek(client_)) {
      case Seen::kGone:
        watching_ = false;
        on_abort_();
        return;
      case Seen::kSent:
        watching_ = false;
        return;
      case Seen::kQuiet:
        break;
    }
    waiting_ = true;
    client_.async_wait(Socket::wait_read, [this, owner = std::move(owner), g = generation_](
                                              const boost::system::error_code& ec) mutable {
      if (g != generation_) return;
      waiting_ = false;
      if (ec) return;
      look(std::move(owner));
    });
  }

  Socket& client_;
  std::function<void()> on_abort_;
  std::weak_ptr<void> owner_;
  unsigned generation_ = 0;
  bool watching_ = false;
  bool waiting_ = false;
};

}  // namespace sluice::server::gateway
