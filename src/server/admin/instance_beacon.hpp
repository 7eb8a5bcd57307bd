// This instance's heartbeat in the Redis it shares with others (sluice/engine/instances.hpp),
// written from the admin loop, and GET /v1/instances: every instance there, with its health.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>

#include "admin_reply.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/loop.hpp"

namespace sluice::control {
class ConfigStore;
}  // namespace sluice::control

namespace sluice::server {

class InstanceBeacon : public std::enable_shared_from_this<InstanceBeacon> {
 public:
  // `loop` is the admin loop's (on `io`); `wall` dates the heartbeats (unix time). All must
  // outlive the beacon's timer, which stop() cancels.
  InstanceBeacon(boost::asio::io_context& io, engine::Loop& loop,
                 std::shared_ptr<const control::ConfigStore> store, const core::Clock& wall);
  void start();  // a heartbeat now, then every kHeartbeatEveryMs (none while Redis is not set)
  void stop();   // thread-safe

  // GET /v1/instances: {"redis", "self", "instances": [...]}, answered once Redis has.
  Reply list();
  const std::string& id() const { return id_; }

 private:
  void beat();
  void arm();
  std::string about() const;  // what the heartbeat says of this instance (JSON)

  engine::Loop& loop_;
  std::shared_ptr<const control::ConfigStore> store_;
  const core::Clock& wall_;
  boost::asio::steady_timer timer_;
  std::string id_;  // HOST:PID:START: a restarted instance is a new one
  std::string host_;
  std::int64_t started_ms_ = 0;
};

}  // namespace sluice::server
