// Session (resp_session.hpp).
#include "resp_session.hpp"

#include <boost/asio/write.hpp>

#include "command_table.hpp"
#include "sluice/core/clock.hpp"
#include "throttle_command.hpp"

namespace sluice::server::resp {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

std::string format_address(const tcp::endpoint& ep) {
  auto a = ep.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  return a.is_v6() ? "[" + a.to_string() + "]:" + std::to_string(ep.port())
                   : a.to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

Session::Session(std::shared_ptr<ServerState> state, std::shared_ptr<SessionRegistry> registry,
                 tcp::socket socket)
    : state_(std::move(state)),
      registry_(std::move(registry)),
      socket_(std::move(socket)),
      parser_(state_->limits) {
  boost::system::error_code ec;
  client_.id = state_->next_client_id.fetch_add(1, std::memory_order_relaxed);
  client_.created = core::SteadyClock::read();
  client_.fd = static_cast<int>(socket_.native_handle());
  if (auto ep = socket_.remote_endpoint(ec); !ec) client_.addr = format_address(ep);
  if (auto ep = socket_.local_endpoint(ec); !ec) client_.laddr = format_address(ep);
  socket_.set_option(tcp::no_delay(true), ec);
  state_->connected.fetch_add(1, std::memory_order_relaxed);
  state_->connections_received.fetch_add(1, std::memory_order_relaxed);
}

Session::~Session() {
  state_->connected.fetch_sub(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(registry_->mu);
  registry_->sessions.erase(this);
}

void Session::start() {
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    if (registry_->closed) return;  // the server is stopping: drop the connection
    registry_->sessions.emplace(this, weak_from_this());
  }
  read();
}

void Session::close() {
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

void Session::read() {
  socket_.async_read_some(asio::buffer(buf_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->on_read(ec, n); });
}

void Session::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (ec) return close();
  parser_.feed(buf_.data(), n);
  // The clock is read once per batch: the commands of one read share `now`, as an event loop
  // shares its cached time.
  proto::resp::ReplyWriter writer(out_, client_.protocol);
  Context ctx{*state_, client_, writer, core::SteadyClock::read()};
  std::uint64_t commands = 0;
  for (;;) {
    const proto::resp::ParseStatus s = collect();
    commands += run_batch(ctx);
    if (client_.close_after_reply) break;  // QUIT: what follows is not answered
    if (s == proto::resp::ParseStatus::kError) {
      // As Redis: say what was wrong, then close; the framing is lost.
      writer.error("ERR " + parser_.error());
      client_.close_after_reply = true;
      state_->protocol_errors.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    if (s == proto::resp::ParseStatus::kPending) break;
  }
  if (commands != 0) state_->commands_processed.fetch_add(commands, std::memory_order_relaxed);
  if (out_.empty()) return read();
  write();
}

proto::resp::ParseStatus Session::collect() {
  batch_.clear();
  if (arg_bytes_.capacity() > kKeepBytes) std::string().swap(arg_bytes_);  // after a big one
  arg_bytes_.clear();
  arg_spans_.clear();
  proto::resp::ParseStatus s = proto::resp::ParseStatus::kCommand;
  while (batch_.size() < kBatch) {
    s = parser_.next();
    if (s != proto::resp::ParseStatus::kCommand) break;
    const auto args = parser_.args();
    Pending p;
    p.first = static_cast<std::uint32_t>(arg_spans_.size());
    p.count = static_cast<std::uint32_t>(args.size());
    for (std::string_view a : args) {
      arg_spans_.emplace_back(static_cast<std::uint32_t>(arg_bytes_.size()),
                              static_cast<std::uint32_t>(a.size()));
      arg_bytes_.append(a);
    }
    if (args.size() >= 2 && is_throttle(args[0])) {
      p.hash = table::hash_key(args[1]);
      p.hashed = true;
      state_->throttle.prefetch(p.hash);
    }
    batch_.push_back(p);
  }
  return s;
}

std::uint64_t Session::run_batch(Context& ctx) {
  std::uint64_t ran = 0;
  for (const Pending& p : batch_) {
    argv_.clear();
    for (std::uint32_t i = 0; i < p.count; ++i) {
      const auto [off, len] = arg_spans_[p.first + i];
      argv_.emplace_back(arg_bytes_.data() + off, len);
    }
    ctx.key_hash = p.hashed ? &p.hash : nullptr;
    dispatch(ctx, argv_);
    ++ran;
    if (client_.close_after_reply) break;
  }
  return ran;
}

void Session::write() {
  sending_.swap(out_);
  out_.clear();
  asio::async_write(socket_, asio::buffer(sending_),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      if (ec || self->client_.close_after_reply) return self->close();
                      // Keep one buffer's capacity around; give back what a burst grew.
                      if (self->sending_.capacity() > kKeepBytes) {
                        std::string().swap(self->sending_);
                      }
                      self->read();
                    });
}

}  // namespace sluice::server::resp
