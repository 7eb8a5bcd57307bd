// ConfigWorker (config_worker.hpp).
#include "config_worker.hpp"

namespace sluice::server {

ConfigWorker::ConfigWorker()
    : work_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}

ConfigWorker::~ConfigWorker() {
  work_.reset();
  io_.stop();
  thread_.join();
}

}  // namespace sluice::server
