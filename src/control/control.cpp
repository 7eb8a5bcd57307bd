// Control (sluice/control/control.hpp): the config thread, the store and the watcher.
#include "sluice/control/control.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "config_watcher.hpp"

namespace sluice::control {

namespace asio = boost::asio;

struct Control::Impl {
  Impl() : work(asio::make_work_guard(io)), thread([this] { io.run(); }) {}
  ~Impl() {
    work.reset();
    io.stop();
    thread.join();
  }
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::thread thread;
  std::shared_ptr<ConfigWatcher> watcher;
};

Control::Control(engine::Engine& engine, ControlOptions options, const core::Clock& clock)
    : impl_(std::make_unique<Impl>()),
      store_(std::make_shared<ConfigStore>(engine, std::move(options.config_path),
                                           std::move(options.rls_files), options.max_config_size,
                                           clock)) {}

Control::~Control() {
  stop();
  // The watcher's timer and signal set belong to the config thread's context: gone before it.
  impl_->watcher.reset();
  impl_.reset();
}

void Control::start() {
  if (impl_->watcher || !store_->has_files()) return;
  impl_->watcher = std::make_shared<ConfigWatcher>(impl_->io, store_);
  impl_->watcher->start();
}

void Control::stop() {
  if (impl_ && impl_->watcher) impl_->watcher->stop();
}

asio::any_io_executor Control::executor() { return impl_->io.get_executor(); }

}  // namespace sluice::control
