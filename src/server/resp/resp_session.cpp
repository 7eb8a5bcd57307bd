// Session (resp_session.hpp).
#include "resp_session.hpp"

#include <strings.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "auth_guard.hpp"
#include "command_table.hpp"
#include "sluice/core/byte_size.hpp"
#include "transaction_commands.hpp"

namespace sluice::server::resp {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

std::string format_address(const tcp::endpoint& ep) {
  auto a = ep.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  return a.is_v6() ? "[" + a.to_string() + "]:" + std::to_string(ep.port())
                   : a.to_string() + ":" + std::to_string(ep.port());
}

bool is(std::string_view name, std::string_view command) {
  return name.size() == command.size() &&
         strncasecmp(name.data(), command.data(), command.size()) == 0;
}

}  // namespace

Session::Session(std::shared_ptr<ServerState> state, std::shared_ptr<SessionRegistry> registry,
                 LoopParts& parts, tcp::socket socket)
    : state_(std::move(state)),
      registry_(std::move(registry)),
      parts_(parts),
      socket_(std::move(socket)),
      parser_(state_->limits) {
  boost::system::error_code ec;
  client_.id = state_->next_client_id.fetch_add(1, std::memory_order_relaxed);
  client_.created = parts_.clock.now();
  client_.fd = static_cast<int>(socket_.native_handle());
  if (auto ep = socket_.remote_endpoint(ec); !ec) {
    client_.addr = format_address(ep);
    client_.peer = peer_of(ep.address());
  }
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
  asio::co_spawn(
      socket_.get_executor(), [self = shared_from_this()] { return self->run(); }, asio::detached);
}

void Session::close() {
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

asio::awaitable<void> Session::run() {
  for (;;) {
    auto [ec, n] = co_await socket_.async_read_some(asio::buffer(buf_), kNoThrow);
    if (ec) break;
    parser_.feed(buf_.data(), n);
    proto::resp::ReplyWriter writer(out_, client_.protocol);
    std::uint64_t commands = 0;
    for (;;) {
      const proto::resp::ParseStatus s = parser_.next();
      if (s == proto::resp::ParseStatus::kCommand) {
        ++commands;
        co_await execute(writer, parser_.args());
        if (client_.close_after_reply) break;  // QUIT: what follows is not answered
        continue;
      }
      if (s == proto::resp::ParseStatus::kError) {
        // As Redis: say what was wrong, then close; the framing is lost.
        writer.error("ERR " + parser_.error());
        client_.close_after_reply = true;
        state_->protocol_errors.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    if (commands != 0) state_->commands_processed.fetch_add(commands, std::memory_order_relaxed);
    if (!out_.empty()) {
      auto [write_ec, written] = co_await asio::async_write(socket_, asio::buffer(out_), kNoThrow);
      (void)written;
      out_.clear();
      if (out_.capacity() > kKeepBytes) std::string().swap(out_);  // give back a burst's growth
      if (write_ec) break;
    }
    if (client_.close_after_reply) break;
  }
  close();
}

asio::awaitable<void> Session::execute(proto::resp::ReplyWriter& writer,
                                       std::span<const std::string_view> args) {
  const std::string_view name = args[0];
  const config::RuleSet& rules = parts_.loop.rules();
  const bool needs_auth = rules.resp && !rules.resp->password.empty();
  if (needs_auth && !client_.authenticated && !is(name, "auth") && !is(name, "hello") &&
      !is(name, "quit")) {
    writer.error("NOAUTH Authentication required.");
    if (client_.in_multi) refuse_transaction(client_);
    co_return;
  }
  if (is(name, "multi") || is(name, "exec") || is(name, "discard")) {
    if (is(name, "exec") && client_.in_multi) {
      co_await exec(writer);
    } else {
      transaction_command(client_, writer, name);
    }
    co_return;
  }
  if (client_.in_multi && !is(name, "quit")) {
    static const config::RespSettings kDefaults;  // no resp section: its defaults
    queue(writer, args, rules.resp ? *rules.resp : kDefaults);
    co_return;
  }
  co_await run_one(writer, args);
}

void Session::queue(proto::resp::ReplyWriter& writer, std::span<const std::string_view> args,
                    const config::RespSettings& caps) {
  // As Redis: a command it would refuse (unknown, wrong arity) is refused now, and EXEC
  // then discards the whole transaction. A command past the caps is refused as Redis refuses
  // one past maxmemory inside MULTI (OOM, then EXECABORT).
  TransactionQueue& q = client_.queued;
  std::string problem = command_problem(args);
  if (problem.empty() && q.commands() + 1 > static_cast<std::size_t>(caps.max_queued_commands)) {
    problem = "OOM command not allowed when queued commands > 'resp.max_queued_commands' (" +
              std::to_string(caps.max_queued_commands) + ").";
  } else if (problem.empty() &&
             q.bytes() + TransactionQueue::bytes_of(args) > caps.max_queued_bytes) {
    problem = "OOM command not allowed when queued bytes > 'resp.max_queued_bytes' (" +
              core::format_bytes(caps.max_queued_bytes) + ").";
  }
  if (problem.starts_with("OOM")) state_->queue_refused.fetch_add(1, std::memory_order_relaxed);
  if (!problem.empty()) {
    writer.error(problem);
    refuse_transaction(client_);
    return;
  }
  q.add(args, !client_.multi_refused);
  writer.simple("QUEUED");
}

asio::awaitable<void> Session::run_one(proto::resp::ReplyWriter& writer,
                                       std::span<const std::string_view> args) {
  Context ctx{*state_, client_, writer, parts_.clock.now(), parts_.loop, outcome_};
  dispatch(ctx, args);
  if (ctx.after != nullptr) {
    co_await parts_.loop.async_complete(outcome_, asio::use_awaitable);
    ctx.after(ctx);
  }
  if (outcome_.in_use()) {
    parts_.loop.release(outcome_);
    outcome_.reset();
  }
}

asio::awaitable<void> Session::exec(proto::resp::ReplyWriter& writer) {
  client_.in_multi = false;
  // Held here while they run (a queued MULTI or EXEC is refused when queued, so nothing
  // they run touches client_.queued); freed when EXEC is done.
  TransactionQueue queued = std::move(client_.queued);
  if (client_.multi_refused) {
    client_.multi_refused = false;
    writer.error("EXECABORT Transaction discarded because of previous errors.");
    co_return;
  }
  writer.array(queued.kept());
  std::vector<std::string_view> views;
  for (std::size_t i = 0; i < queued.kept(); ++i) {
    queued.unpack(i, views);
    co_await run_one(writer, views);
  }
}

}  // namespace sluice::server::resp
