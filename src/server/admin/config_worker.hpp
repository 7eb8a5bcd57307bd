// The thread that reads, checks and applies configs (reloads, rule changes, :validate). A 10 MB
// config takes seconds to parse; on this thread that time never stalls the admin loop's
// /healthz and /metrics, the RESP listener that shares the loop, or the gateway's loops.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

namespace sluice::server {

class ConfigWorker {
 public:
  ConfigWorker();
  // Finishes the job in progress (a reload is bounded by the config size cap), drops the
  // queued ones and joins. Must not run on the worker's own thread.
  ~ConfigWorker();
  ConfigWorker(const ConfigWorker&) = delete;
  ConfigWorker& operator=(const ConfigWorker&) = delete;

  // Jobs posted here run one at a time, in order, so a reload and a PUT never interleave.
  boost::asio::io_context& context() { return io_; }
  boost::asio::any_io_executor executor() { return io_.get_executor(); }

 private:
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace sluice::server
