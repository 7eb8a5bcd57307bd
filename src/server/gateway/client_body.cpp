// ClientSession (client_session.hpp): reading the request body at its pace, reading ahead what
// is held before forwarding (request_body.hpp, body_buffer.hpp), and refusing a body that is
// too slow, too long or malformed.
#include <algorithm>
#include <chrono>

#include "client_session.hpp"
#include "http_io.hpp"
#include "worker.hpp"

namespace sluice::server::gateway {

using boost::system::error_code;

Awaitable<std::pair<error_code, std::size_t>> ClientSession::read_request_piece() {
  if (!body_) body_ = std::make_unique<char[]>(kPieceBytes);
  co_return co_await read_request_into(body_.get(), kPieceBytes);
}

Awaitable<std::pair<error_code, std::size_t>> ClientSession::read_request_into(char* data,
                                                                               std::size_t size) {
  core::Nanos now = worker_.clock().now();
  if (!body_pace_.started()) body_pace_ = BodyPace(timeouts_.body, bodies_.min_rate, now);
  client_watch_.expires_after(
      std::chrono::nanoseconds(std::max<core::Nanos>(0, body_pace_.deadline() - now)));
  reading_body_ = true;
  auto result = co_await read_body_piece(client_, client_buffer_, *parser_, data, size);
  reading_body_ = false;
  client_watch_.disarm();
  body_pace_.got(result.second, worker_.clock().now());
  co_return result;
}

Awaitable<error_code> ClientSession::read_body_ahead(const BodyPlan& plan) {
  const auto length = parser_->content_length();
  held_.start(plan.memory, length ? std::optional(*length) : std::nullopt, bodies_.temp_dir);
  while (!parser_->is_done() && held_.size() < plan.total) {
    const auto want = static_cast<std::size_t>(plan.total - held_.size());
    const std::span<char> room = held_.memory_room(want);
    if (!room.empty()) {
      auto [ec, got] = co_await read_request_into(room.data(), room.size());
      held_.commit(got);
      if (ec) co_return ec;
    } else {
      // Memory is full: the rest goes to the file, a piece at a time.
      if (!body_) body_ = std::make_unique<char[]>(kPieceBytes);
      auto [ec, got] = co_await read_request_into(body_.get(), std::min(want, kPieceBytes));
      if (ec) co_return ec;
      if (!held_.spill({body_.get(), got})) {
        // Better streamed than refused: what is held goes first, the rest as it comes.
        warn_spill_failed(held_, worker_.clock().now());
        break;
      }
    }
    if (!plan.buffered) break;
  }
  co_return error_code{};
}

Awaitable<bool> ClientSession::drain_request_body() {
  while (!parser_->is_done()) {
    auto [ec, n] = co_await read_request_piece();
    if (ec) co_return false;
  }
  co_return true;
}

Awaitable<ClientSession::Next> ClientSession::client_body_error(const error_code& ec) {
  // A body too slow gets 408 (as nginx's client_body_timeout), too long 413, malformed (a bad
  // chunk) 400; a client that left gets nothing.
  int status = 0;
  if (body_timed_out_) {
    status = 408;
  } else if (ec == http::error::body_limit) {
    status = 413;
  } else if (is_parse_error(ec)) {
    status = 400;
  }
  if (status != 0 && client_.is_open()) co_await answer_error(status);
  co_return Next::kClose;
}

}  // namespace sluice::server::gateway
