// Client (sluice/backend/redis/client.hpp): the public face of ClientCore.
#include "sluice/backend/redis/client.hpp"

#include "client_core.hpp"
#include "sluice/log/log.hpp"

namespace sluice::backend::redis {

void log_to_stderr(const std::string& line) { log::warn("sluice: redis: " + line); }

Client::Client(boost::asio::io_context& io, ClientOptions options)
    : core_(std::make_unique<detail::ClientCore>(io, std::move(options))) {}

Client::~Client() = default;

void Client::command(std::vector<std::string> args, std::string_view routing_key, Callback cb) {
  core_->command(std::move(args), routing_key, std::move(cb));
}

void Client::eval(const Script& script, std::vector<std::string> keys,
                  std::vector<std::string> args, Callback cb) {
  core_->eval(script, std::move(keys), std::move(args), std::move(cb));
}

void Client::eval(const Script& script, std::string_view routing_key, std::size_t key_count,
                  const WireArgs& tail, Callback cb) {
  core_->eval(script, routing_key, key_count, tail, std::move(cb));
}

bool Client::connected() const { return core_->connected(); }

const Client::Stats& Client::stats() const { return core_->stats(); }

void Client::close() { core_->close(); }

}  // namespace sluice::backend::redis
