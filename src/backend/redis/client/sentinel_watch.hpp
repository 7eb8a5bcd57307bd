// Where the master is, from Redis Sentinel: SENTINEL get-master-addr-by-name asked of the
// sentinels in turn (the one that answered last first), and +switch-master followed on one
// sentinel's pub/sub, so a failover is seen the moment the sentinels announce it. The client
// asks again itself when the master it has fails, refuses (READONLY) or is not a master.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "connection.hpp"
#include "sluice/backend/redis/endpoint.hpp"

namespace sluice::backend::redis::detail {

class SentinelWatch final : public ConnectionEvents {
 public:
  using OnMaster = std::function<void(const Endpoint&)>;

  // `options`: the sentinels' connections (their opening AUTH or PING, TLS); `on_master` is
  // told every address a sentinel gives, the same one again included, never inside ask().
  SentinelWatch(boost::asio::io_context& io, std::vector<Endpoint> sentinels, std::string master,
                ConnectionOptions options, OnMaster on_master,
                void (*log)(const std::string&) = nullptr);
  ~SentinelWatch();
  SentinelWatch(const SentinelWatch&) = delete;
  SentinelWatch& operator=(const SentinelWatch&) = delete;

  // Asks for the master and subscribes to +switch-master.
  void start();
  // A round of asking, unless one is under way: each sentinel in turn until one names the
  // master. When none does, another round follows after a backoff.
  void ask();
  bool asking() const { return asking_; }
  // Why the last round found no master ("" when it found one).
  const std::string& last_error() const { return last_error_; }
  std::uint64_t asks() const { return asks_; }
  void close();

  void on_reply(Connection& from, RequestPtr request, Reply reply) override;
  void on_failure(Connection& from, RequestPtr request, Failure failure) override;
  void on_connected(Connection& c, bool again) override;
  void on_down(Connection& c) override;
  void on_push(Connection& from, Reply reply) override;

 private:
  void ask_from(std::size_t index, std::size_t tried);
  void on_answer(std::size_t index, std::size_t tried, const Outcome& outcome);
  void round_failed();
  void subscribe_to(std::size_t index);
  Connection& command_connection(std::size_t index);

  boost::asio::io_context& io_;
  std::vector<Endpoint> sentinels_;
  std::string master_;
  ConnectionOptions options_;
  ConnectionOptions subscriber_options_;
  OnMaster on_master_;
  void (*log_)(const std::string&);
  bool closed_ = false;
  std::uint64_t next_id_ = 1;

  std::vector<std::shared_ptr<Connection>> commands_;  // per sentinel, opened on first use
  std::shared_ptr<Connection> subscriber_;
  std::size_t subscribed_to_ = 0;
  std::size_t preferred_ = 0;  // the sentinel that answered last

  bool asking_ = false;
  std::uint64_t asks_ = 0;
  std::string last_error_;
  core::Nanos backoff_;
  boost::asio::steady_timer retry_timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace sluice::backend::redis::detail
