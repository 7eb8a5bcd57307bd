// The config lifecycle of `sluice serve`: the rules in force and the files behind them (load,
// validate, swap, watch, write back), on a thread of its own. serve owns it; the admin API is
// its HTTP face, SIGHUP and the file watcher its other users, and it runs with no listener.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>
#include <vector>

#include "sluice/control/config_store.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::control {

struct ControlOptions {
  std::string config_path;             // "" without a config file
  std::vector<std::string> rls_files;  // serve --rls-config
  std::size_t max_config_size = config::kDefaultMaxConfigSize;
};

class Control {
 public:
  // `clock` dates each swap of the rules; it must outlive this.
  Control(engine::Engine& engine, ControlOptions options, const core::Clock& clock);
  // Stops the watcher, finishes the job in progress (a reload is bounded by the config size
  // cap), drops the queued ones and joins the config thread.
  ~Control();
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;

  // Reloads on SIGHUP and when a file changes (polled once a second), when there are files.
  void start();
  void stop();

  ConfigStore& store() { return *store_; }
  const std::shared_ptr<ConfigStore>& shared_store() const { return store_; }

  // Jobs posted here run one at a time, in order, on the config thread, so a reload and a
  // change never interleave, and a 10 MB config's seconds of parsing never stall a listener.
  boost::asio::any_io_executor executor();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<ConfigStore> store_;
};

}  // namespace sluice::control
