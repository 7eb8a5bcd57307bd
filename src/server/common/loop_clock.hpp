// The time an event loop decides with: read from its source the first time it is asked in a
// loop pass, then shared by every request handled in that pass (nginx's ngx_current_msec).
// The frontends inject it; nothing below them reads a clock.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "sluice/core/clock.hpp"

namespace sluice::server {

class LoopClock final : public core::Clock {
 public:
  LoopClock(boost::asio::io_context& io, const core::Clock& source) : io_(io), source_(source) {}

  // The loop's thread only. A pass ends when the handlers that were ready together have run:
  // the reset is posted behind them.
  core::Nanos now() const override {
    if (!fresh_) {
      now_ = source_.now();
      fresh_ = true;
      boost::asio::post(io_, [this] { fresh_ = false; });
    }
    return now_;
  }

 private:
  boost::asio::io_context& io_;
  const core::Clock& source_;
  mutable core::Nanos now_ = 0;
  mutable bool fresh_ = false;
};

}  // namespace sluice::server
