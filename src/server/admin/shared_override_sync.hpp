// Keeps this instance's rules kept in Redis on the per-key overrides every instance shares
// there (sluice/config/shared_overrides.hpp): polls them from the admin loop, writes PUTs.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "sluice/config/shared_overrides.hpp"
#include "sluice/control/config_store.hpp"
#include "sluice/engine/loop.hpp"

namespace sluice::server {

class SharedOverrideSync : public std::enable_shared_from_this<SharedOverrideSync> {
 public:
  // `loop` is the admin loop's (on `io`); `config_work` is the config worker, where the rules
  // change. All must outlive the timer, which stop() cancels.
  SharedOverrideSync(boost::asio::io_context& io, engine::Loop& loop,
                     std::shared_ptr<control::ConfigStore> store,
                     boost::asio::any_io_executor config_work);
  void start();  // a read now, then every engine::kSharedOverridesPollMs
  void stop();   // thread-safe

  // On the admin loop: sets (limit nullopt: removes) RULE/KEY in Redis, then, once written,
  // puts the shared set in force here. `done` runs on the config worker with what Redis
  // answered and, when written, how the local change went.
  using Written = std::function<void(engine::SharedWrite, const control::ChangeOutcome&)>;
  void write(const std::string& rule, const std::string& key,
             const std::optional<std::string>& limit, Written done);

 private:
  void arm();
  void poll();
  void adopt(const engine::SharedOverridesRead& read);  // on the admin loop
  void apply(const Written& done);                      // on the config worker
  std::shared_ptr<const config::SharedOverrides> shared() const;

  engine::Loop& loop_;
  std::shared_ptr<control::ConfigStore> store_;
  boost::asio::any_io_executor config_work_;
  boost::asio::steady_timer timer_;
  std::string generation_;  // the admin loop's: the one read last ("" before the first)
  bool stopped_ = false;    // the admin loop's
  mutable std::mutex mutex_;
  std::shared_ptr<const config::SharedOverrides> shared_;  // Redis's set, as read or written
  std::uint64_t revision_ = 0;                             // bumped whenever shared_ is replaced
  // The config worker's, as "revision/rules version": the last found in force, the last
  // refused (logged once).
  std::string settled_;
  std::string failed_;
};

}  // namespace sluice::server
