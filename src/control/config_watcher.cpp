// ConfigWatcher (config_watcher.hpp): SIGHUP and a one-second stat() poll, on one strand.
#include "config_watcher.hpp"

#include <boost/asio/dispatch.hpp>
#include <chrono>
#include <csignal>

#include "sluice/control/config_store.hpp"
#include "sluice/notify/service_notify.hpp"

namespace sluice::control {

namespace asio = boost::asio;

constexpr auto kPollInterval = std::chrono::seconds(1);

ConfigWatcher::ConfigWatcher(asio::io_context& io, std::shared_ptr<ConfigStore> store)
    : strand_(asio::make_strand(io)), store_(std::move(store)), hangup_(strand_), tick_(strand_) {}

void ConfigWatcher::start() {
  // Directly, not on the strand: the SIGHUP handler must be in place before start() returns
  // (the default action of SIGHUP ends the process), and nothing else uses these objects yet.
  hangup_.add(SIGHUP);
  wait_signal();
  wait_tick();
}

void ConfigWatcher::stop() {
  asio::dispatch(strand_, [self = shared_from_this()] {
    self->stopped_ = true;
    boost::system::error_code ignored;
    self->hangup_.cancel(ignored);
    self->hangup_.clear(ignored);
    self->tick_.cancel();
  });
}

void ConfigWatcher::wait_signal() {
  hangup_.async_wait([self = shared_from_this()](const boost::system::error_code& ec, int) {
    if (ec || self->stopped_) return;
    {
      const notify::Reloading reloading;  // systemctl reload waits for this to end
      self->store_->reload();
    }
    self->wait_signal();
  });
}

void ConfigWatcher::wait_tick() {
  tick_.expires_after(kPollInterval);
  tick_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->stopped_) return;
    self->store_->poll();
    self->wait_tick();
  });
}

}  // namespace sluice::control
