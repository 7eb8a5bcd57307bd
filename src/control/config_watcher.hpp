// Reloads the config file on SIGHUP and when the file changes. The change check is an mtime /
// size / inode poll once a second rather than inotify: it sees edits in place, editors that
// rename a new file over the old, and symlink swaps (Kubernetes ConfigMaps) alike, and costs
// one stat() a second.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <memory>

namespace sluice::control {

class ConfigStore;  // sluice/control/config_store.hpp

class ConfigWatcher : public std::enable_shared_from_this<ConfigWatcher> {
 public:
  ConfigWatcher(boost::asio::io_context& io, std::shared_ptr<ConfigStore> store);

  void start();
  // Cancels the timer and the signal wait. Thread-safe.
  void stop();

 private:
  void wait_signal();
  void wait_tick();

  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  std::shared_ptr<ConfigStore> store_;
  boost::asio::signal_set hangup_;
  boost::asio::steady_timer tick_;
  bool stopped_ = false;
};

}  // namespace sluice::control
