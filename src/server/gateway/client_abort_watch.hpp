// Notices a client that leaves (its socket's EOF or reset) while its request waits on the
// upstream, so that the wait ends at once, as nginx's default proxy_ignore_client_abort off.
// One read-readiness wait on the idle client socket (edge::async_wait_readable): it consumes no
// bytes, peeks only where an epoll event came since the client's last read emptied the socket,
// and costs no epoll_ctl, so a client that just waits costs no syscall.
#pragma once

#include <functional>
#include <memory>

#include "edge_read.hpp"
#include "loop_types.hpp"

namespace sluice::server::gateway {

class ClientAbortWatch {
 public:
  // `on_abort` runs on the socket's executor when the client is seen gone during a watch.
  ClientAbortWatch(Socket& client, std::function<void()> on_abort)
      : client_(client), on_abort_(std::move(on_abort)) {}

  // The object whose lifetime the pending wait extends (the session owning this watch).
  void set_owner(std::weak_ptr<void> owner) { owner_ = std::move(owner); }

  // Watches until stop(). A client already gone fires (from the loop) at once; one that has
  // sent more (a pipelined request) cannot be told from one that waits, so the watch ends
  // there (as in nginx).
  void start() {
    std::shared_ptr<void> owner = owner_.lock();
    if (!owner) return;
    watching_ = true;
    edge::async_wait_readable(client_, [this, owner = std::move(owner), g = generation_](
                                           const boost::system::error_code& ec, std::size_t seen) {
      if (g != generation_) return;  // stopped meanwhile
      watching_ = false;
      if (ec == boost::asio::error::operation_aborted) return;
      if (ec || seen == 0) on_abort_();
    });
  }

  // Ends the watch (before the client socket is read or written again).
  void stop() {
    if (!watching_) return;
    watching_ = false;
    ++generation_;
    boost::system::error_code ignored;
    client_.cancel(ignored);  // nothing else is pending on the client while it is watched
  }

 private:
  Socket& client_;
  std::function<void()> on_abort_;
  std::weak_ptr<void> owner_;
  unsigned generation_ = 0;
  bool watching_ = false;
};

}  // namespace sluice::server::gateway
